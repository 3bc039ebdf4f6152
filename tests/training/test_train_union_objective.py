"""train_union.py optimises UNION's joint loss, ``cls + lambda * reconstruction``, with the lambda it is given.

Two tiny in-process runs from the same start, lambda = 0 and lambda = 1. The start checkpoint
already holds the classifier and the reconstruction head and has no dropout, and one batch holds
the whole training set, so the loss the run logs at step 1 is a plain function of that
checkpoint: it is recomputed here from ``BertForSequenceClassification`` (the class term) and
``BertForMaskedLM`` (the reconstruction term: the original story's token at each position of the
input, [CLS], the leading context and padding left out), one example at a time.
"""

from __future__ import annotations

import json
import math

import pytest
import tiny_models
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from test_train_union import write_pairs
from transformers import BertForMaskedLM, BertForSequenceClassification

from story_quality.training import train_union
from story_quality.training.union_model import BertForUnionTraining

MAX_LENGTH = 48
STORIES = 4  # 8 rows: one human story and one reordered copy each


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A start checkpoint with every weight of the training model (nothing is drawn at load) and pairs."""
    root = tmp_path_factory.mktemp("union-objective")
    torch.manual_seed(0)
    tokenizer = tiny_models.tokenizer(lowercase=True, model_max_length=MAX_LENGTH)
    config = tiny_models.bert_config(
        len(tokenizer),
        max_position_embeddings=64,
        num_labels=2,
        id2label=tiny_models.UNION_LABELS,  # a start classifier is a UNION one (another task's is refused)
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    BertForUnionTraining(config).save_pretrained(root / "base")
    tokenizer.save_pretrained(root / "base")
    write_pairs(root / "pairs.jsonl", STORIES, seed=3)
    return root


def run(start, weight: float) -> tuple[dict, dict[str, torch.Tensor]]:
    output = start / f"run-{weight}"
    train_union.main(
        [
            "--model_name_or_path", str(start / "base"), "--dataset", str(start / "pairs.jsonl"),
            "--output_dir", str(output), "--max_length", str(MAX_LENGTH), "--validation_fraction", "0",
            "--reconstruction_weight", str(weight), "--max_steps", "2", "--warmup_steps", "0",
            "--per_device_train_batch_size", str(2 * STORIES), "--logging_steps", "1",
            "--save_strategy", "no", "--eval_strategy", "no", "--report_to", "none", "--use_cpu", "true",
            "--disable_tqdm", "true", "--dataloader_pin_memory", "false",
        ]
    )  # fmt: skip
    history = json.loads((output / "trainer_state.json").read_text())["log_history"]
    first = next(entry for entry in history if entry.get("step") == 1 and "loss" in entry)
    return first, load_file(output / "model.safetensors")


def slow_losses(start) -> tuple[float, float]:
    """(class loss, reconstruction loss) of the start checkpoint on all the rows, one row at a time."""
    tokenizer = tiny_models.tokenizer(lowercase=True, model_max_length=MAX_LENGTH)
    classifier = BertForSequenceClassification.from_pretrained(start / "base").eval()
    masked_lm = BertForMaskedLM.from_pretrained(start / "base").eval()
    rows = [json.loads(line) for line in (start / "pairs.jsonl").read_text().splitlines()]
    class_losses, token_losses = [], []
    with torch.no_grad():
        for row in rows:
            ids = tokenizer(row["text"], truncation=True, max_length=MAX_LENGTH, return_tensors="pt")[
                "input_ids"
            ]
            original = tokenizer(row["original"], truncation=True, max_length=MAX_LENGTH)["input_ids"]
            context = tokenizer(row["context"], add_special_tokens=False)["input_ids"]
            logits = classifier(input_ids=ids).logits
            class_losses.append(F.cross_entropy(logits, torch.tensor([row["label"]])).item())
            token_logits = masked_lm(input_ids=ids).logits[0]
            for position in range(1 + len(context), min(ids.shape[1], len(original))):
                target = torch.tensor([original[position]])
                token_losses.append(F.cross_entropy(token_logits[position : position + 1], target).item())
    assert len(class_losses) == 2 * STORIES and len(token_losses) > 20 * STORIES
    return sum(class_losses) / len(class_losses), sum(token_losses) / len(token_losses)


@pytest.fixture(scope="module")
def runs(start):
    return {weight: run(start, weight) for weight in (0.0, 1.0)}


def test_the_logged_loss_is_the_joint_loss_with_the_weight_given(start, runs):
    class_loss, reconstruction_loss = slow_losses(start)
    assert reconstruction_loss > 1.0  # the term is far from negligible (tiny vocabulary: about log 350)
    for weight, (first, _) in runs.items():
        assert first["loss"] == pytest.approx(class_loss + weight * reconstruction_loss, abs=1e-4), weight


def test_the_reconstruction_weight_changes_what_the_encoder_learns(runs):
    (_, without), (_, with_reconstruction) = runs[0.0], runs[1.0]
    assert sorted(without) == sorted(with_reconstruction)
    differences = {
        name: (without[name] - with_reconstruction[name]).abs().max().item()
        for name in without
        if name.startswith("bert.encoder.")
    }
    assert max(differences.values()) > 1e-6, differences
    assert all(math.isfinite(d) for d in differences.values())
