"""The one UNION trainer: a plain run trains as the plain Trainer, and the terms compose as documented."""

from __future__ import annotations

import math

import pytest
import tiny_models
import torch
from safetensors.torch import load_file
from test_acceptability import write_cola
from test_ranking import _features, slow_ranking_loss, two_step_run
from transformers import Trainer, TrainingArguments

from story_quality.training import train_union
from story_quality.training.acceptability import (
    AcceptabilityTerm,
    acceptability_logits,
    attach_acceptability_head,
    read_acceptability_batches,
)
from story_quality.training.distillation import DistillationTerm
from story_quality.training.ranking import RankingTerm
from story_quality.training.union_model import BertForUnionTraining, UnionDataCollator
from story_quality.training.union_trainer import UnionTrainer
from story_quality.union.normalization import ROC_STORIES


class PlainTrainer(Trainer):
    """The reference for a run with no term on: ``transformers.Trainer`` and its own loss, nothing added."""

    def __init__(self, *args, terms=(), **kwargs) -> None:
        assert not terms, "a plain run builds no loss term"
        super().__init__(*args, **kwargs)
        self.terms = []  # what the run reads after training; the loss never sees it


@pytest.mark.parametrize("reconstruction", ["0", "0.1"])
def test_a_run_with_the_shipped_recipes_options_trains_as_the_plain_trainer_bit_for_bit(
    tmp_path, monkeypatch, reconstruction
):
    """The shipped recipe switches no term on (``training/configs/union-shipped-default.json``: no
    distillation, ranking or acceptability; length-grouped batches): its weights must be the plain
    Trainer's exactly, with and without the reconstruction term."""
    argv = [
        *two_step_run(tmp_path), "--reconstruction_weight", reconstruction, "--max_steps", "3",
        "--train_sampling_strategy", "group_by_length", "--learning_rate", "1e-3", "--seed", "42",
    ]  # fmt: skip
    composed = train_union.main([*argv, "--output_dir", str(tmp_path / "composed")])
    monkeypatch.setattr(train_union, "UnionTrainer", PlainTrainer)
    plain = train_union.main([*argv, "--output_dir", str(tmp_path / "plain")])
    assert composed["train_loss"] == plain["train_loss"]
    ours, theirs = (load_file(tmp_path / name / "model.safetensors") for name in ("composed", "plain"))
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    start = load_file(tmp_path / "base" / "model.safetensors")
    assert not torch.equal(ours["classifier.weight"], start["classifier.weight"])  # it did train


def slow_cross_entropy(logits: list[list[float]], targets: list[float]) -> float:
    """Mean cross-entropy of two-class logits against P(class 1) = target, row by row in Python floats."""
    total = 0.0
    for (a, b), target in zip(logits, targets, strict=True):
        top = max(a, b)
        normaliser = top + math.log(math.exp(a - top) + math.exp(b - top))
        total -= target * (b - normaliser) + (1 - target) * (a - normaliser)
    return total / len(logits)


def test_every_term_on_gives_the_documented_composition(tmp_path):
    """loss = lambda * reconstruction + (1 - r) * ((1 - d) * CE(label) + d * CE(teacher)) + r * ranking
    + a * acceptability, each piece computed here the slow way; evaluation leaves the acceptability
    draw out."""
    features, _ = _features(3, 2, tmp_path)
    tokenizer = tiny_models.tokenizer()
    torch.manual_seed(0)
    config = tiny_models.bert_config(
        len(tokenizer), hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    )
    model = BertForUnionTraining(config, reconstruction_weight=0.1)
    attach_acceptability_head(model)
    write_cola(tmp_path / "cola.tsv", 10)
    batches = read_acceptability_batches(str(tmp_path / "cola.tsv"), tokenizer, ROC_STORIES, 32, 4, 1)
    d, r, a = 0.2, 0.3, 0.4
    trainer = UnionTrainer(
        model=model,
        args=TrainingArguments(output_dir=str(tmp_path / "unused"), report_to="none", use_cpu=True),
        terms=[DistillationTerm(d), RankingTerm("margin", r), AcceptabilityTerm(a, batches)],
    )
    batch = UnionDataCollator(tokenizer)([features[i] for i in range(6)])
    teacher = torch.tensor([0.9, 0.2, 0.7, 0.4, 0.5, 0.1])
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids", "labels")}
    with torch.no_grad():
        own = model(**inputs, reconstruction_labels=batch["reconstruction_labels"])
        logits = own.logits.tolist()
        head_logits = acceptability_logits(model, batches.batch(0)).tolist()
    reconstruction = 0.1 * own.reconstruction_loss.item()
    hard = slow_cross_entropy(logits, batch["labels"].tolist())
    soft = slow_cross_entropy(logits, teacher.tolist())
    ranking = slow_ranking_loss(
        [b - a for a, b in logits], batch["story_index"].tolist(), batch["severity"].tolist(), "margin"
    )
    head = slow_cross_entropy(head_logits, [float(y) for y in batches.batch(0)["labels"].tolist()])
    classification = (1 - d) * hard + d * soft
    expected = reconstruction + (1 - r) * classification + r * ranking
    loss = trainer.compute_loss(model.train(), {**batch, "teacher": teacher})
    assert loss.item() == pytest.approx(expected + a * head, abs=1e-5)
    evaluated = trainer.compute_loss(model.eval(), {**batch, "teacher": teacher})
    assert evaluated.item() == pytest.approx(expected, abs=1e-5)
