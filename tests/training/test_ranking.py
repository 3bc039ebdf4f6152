"""The ranking objective: a human story above its light copies above its heavy ones, in whole-story batches."""

from __future__ import annotations

import json
import math
import re

import datasets
import pytest
import tiny_models
import torch
from test_train_union import write_pairs
from torch.nn import functional as F
from transformers import BertForSequenceClassification, BertTokenizer, TrainingArguments

from story_quality.training import train_union
from story_quality.training.distillation import DistillationTerm, soft_cross_entropy
from story_quality.training.ranking import (
    MARGIN,
    RankingTerm,
    StoryBatchSampler,
    ranking_loss,
    severities,
    severity,
)
from story_quality.training.union_model import UnionDataCollator, encode_union_examples
from story_quality.training.union_trainer import UnionTrainer


def slow_ranking_loss(scores: list[float], stories: list[int], severity: list[int], kind: str) -> float:
    """The pairwise loss written out pair by pair, the reference for the tensor version."""
    losses = []
    for i in range(len(scores)):
        for j in range(len(scores)):
            if stories[i] == stories[j] and severity[i] < severity[j]:
                gap = scores[i] - scores[j]
                losses.append(
                    math.log(1 + math.exp(-gap)) if kind == "bradley_terry" else max(0.0, MARGIN - gap)
                )
    return sum(losses) / len(losses) if losses else 0.0


@pytest.mark.parametrize("kind", ["bradley_terry", "margin"])
def test_the_loss_is_lower_for_human_above_light_above_heavy_than_reversed(kind):
    # two stories: rows human (0), light copy (1), heavy copy (3); story 8 has one copy only
    stories = [7, 7, 7, 8, 8]
    severity_ = [0, 1, 3, 0, 2]
    right = [2.0, 0.5, -1.5, 1.0, -0.2]
    reversed_ = [-1.5, 0.5, 2.0, -0.2, 1.0]
    measured = {}
    for name, scores in (("right", right), ("reversed", reversed_)):
        loss = ranking_loss(torch.tensor(scores), torch.tensor(stories), torch.tensor(severity_), kind)
        assert loss.item() == pytest.approx(slow_ranking_loss(scores, stories, severity_, kind), abs=1e-6)
        measured[name] = loss.item()
    assert measured["right"] < measured["reversed"]
    # rows of different stories are never compared: another story's rows change nothing
    alone = ranking_loss(
        torch.tensor(right[:3]), torch.tensor(stories[:3]), torch.tensor(severity_[:3]), kind
    )
    assert alone.item() == pytest.approx(slow_ranking_loss(right[:3], stories[:3], severity_[:3], kind))
    # equal severities (a story's human row once per copy) make no pair; no pair, no loss but a gradient
    scores = torch.tensor([1.0, -1.0], requires_grad=True)
    none = ranking_loss(scores, torch.tensor([1, 1]), torch.tensor([0, 0]), kind)
    none.backward()
    assert none.item() == 0.0 and scores.grad is not None
    with pytest.raises(ValueError, match=r"ranking loss must be one of margin, bradley_terry, got 'none'"):
        ranking_loss(scores, torch.tensor([1, 1]), torch.tensor([0, 1]), "none")


def test_severity_comes_from_the_copys_corruptions_under_each_source():
    rows = datasets.Dataset.from_dict(
        {
            "label": [1, 0, 0, 0, 0, 0],
            "corruptions": [
                [],
                ["reordering"],
                ["negation", "substitution:word", "repetition:sentence"],
                ["generated"],
                ["generated:ngram"],
                ["generated:fluent"],
            ],
        }
    )
    assert severities(rows, "perturbations", "rows") == [0, 1, 3, 1, 1, 1]
    assert severities(rows, "kind", "rows") == [0, 3, 3, 2, 2, 1]
    assert severities(rows, "both", "rows") == [0, 3, 5, 2, 2, 1]
    with pytest.raises(
        ValueError, match=r"--severity_source kind reads .*'corruptions' column, which pairs\.jsonl lacks"
    ):
        severities(rows.remove_columns("corruptions"), "kind", "pairs.jsonl")
    with pytest.raises(
        ValueError, match=r"severity source must be one of perturbations, kind, both, got 'size'"
    ):
        severity(0, ["negation"], "size")


def test_the_sampler_keeps_each_storys_rows_in_one_batch_and_shuffles_by_seed():
    stories = [s for s in range(20) for _ in range(4 if s % 3 else 2)]
    stories = stories[::2] + stories[1::2]  # a story's rows are not next to each other
    sampler = StoryBatchSampler(stories, batch_size=10, seed=1)
    batches = list(sampler)
    assert sorted(row for batch in batches for row in batch) == list(range(len(stories)))
    assert all(len(batch) <= 10 for batch in batches) and len(sampler) == len(batches)
    batch_of = {}
    for number, batch in enumerate(batches):
        for row in batch:
            assert batch_of.setdefault(stories[row], number) == number
    assert list(StoryBatchSampler(stories, 10, seed=1)) == batches
    assert list(StoryBatchSampler(stories, 10, seed=2)) != batches
    sampler.set_epoch(1)
    assert list(sampler) != batches
    with pytest.raises(ValueError, match=r"a story has 4 rows, more than the batch size 3"):
        StoryBatchSampler(stories, 3, seed=1)


def test_grouped_by_length_the_batches_hold_whole_stories_of_like_lengths():
    stories = [s for s in range(40) for _ in range(2)]
    lengths = [10 if s % 2 else 200 for s in stories]
    batches = list(StoryBatchSampler(stories, batch_size=4, seed=5, lengths=lengths))
    assert sorted(row for batch in batches for row in batch) == list(range(80))
    for batch in batches:
        assert len({stories[row] for row in batch}) == 2  # two whole stories of two rows each
        assert len({lengths[row] for row in batch}) == 1  # all short or all long
    plain = list(StoryBatchSampler(stories, batch_size=4, seed=5))
    assert any(len({lengths[row] for row in batch}) == 2 for batch in plain)
    assert list(StoryBatchSampler(stories, 4, seed=5, lengths=lengths)) == batches


def _features(n_stories: int, copies: int, tmp_path) -> tuple[datasets.Dataset, BertTokenizer]:
    write_pairs(tmp_path / "pairs.jsonl", n_stories)
    rows = datasets.load_dataset("json", data_files=str(tmp_path / "pairs.jsonl"), split="train")
    rows = datasets.concatenate_datasets([rows] * copies)
    tokenizer = BertTokenizer(vocab=tiny_models.vocabulary(True), do_lower_case=True)
    features = rows.map(
        encode_union_examples,
        batched=True,
        fn_kwargs={"tokenizer": tokenizer, "max_length": 32},
        remove_columns=rows.column_names,
    )
    features = features.add_column("story_index", rows["story_index"])
    return features.add_column("severity", severities(rows, "perturbations", "pairs")), tokenizer


def test_the_trainers_batches_hold_whole_stories_and_its_loss_gives_the_ranking_its_weight(tmp_path):
    features, tokenizer = _features(9, 2, tmp_path)
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_models.bert_config(len(tokenizer), num_labels=2)).eval()
    args = TrainingArguments(
        output_dir=str(tmp_path / "unused"), report_to="none", per_device_train_batch_size=6,
        remove_unused_columns=False, use_cpu=True, dataloader_pin_memory=False,
    )  # fmt: skip
    trainer = UnionTrainer(
        model=model, args=args, train_dataset=features, data_collator=UnionDataCollator(tokenizer),
        terms=[DistillationTerm(0.2), RankingTerm("bradley_terry", 0.3)],
    )  # fmt: skip
    seen: dict[int, int] = {}
    for number, batch in enumerate(trainer.get_train_dataloader()):
        for story in batch["story_index"].tolist():
            assert seen.setdefault(story, number) == number
        assert len(batch["story_index"]) <= 6
    assert sorted(seen) == list(range(9))
    batch = UnionDataCollator(tokenizer)([features[i] for i in range(4)])
    batch.pop("reconstruction_labels")
    teacher = torch.tensor([0.9, 0.2, 0.7, 0.4])
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    hard = F.cross_entropy(logits, batch["labels"])
    classification = 0.8 * hard + 0.2 * soft_cross_entropy(logits, teacher)
    scores = (logits[:, 1] - logits[:, 0]).tolist()
    ranking = slow_ranking_loss(
        scores, batch["story_index"].tolist(), batch["severity"].tolist(), "bradley_terry"
    )
    loss = trainer.compute_loss(model, {**batch, "teacher": teacher})
    assert loss.item() == pytest.approx(0.7 * classification.item() + 0.3 * ranking, abs=1e-5)


def two_step_run(tmp_path) -> list[str]:
    """train_union.py's arguments for two steps of a tiny BERT classifier on 12 stories' pairs (no output folder)."""
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab=tiny_models.vocabulary(True), do_lower_case=True)
    BertForSequenceClassification(  # a classifier start is UNION's (another task's is refused)
        tiny_models.bert_config(len(tokenizer), max_position_embeddings=64, id2label=tiny_models.UNION_LABELS)
    ).save_pretrained(tmp_path / "base")
    tokenizer.save_pretrained(tmp_path / "base")
    write_pairs(tmp_path / "pairs.jsonl", 12, seed=3)
    return [
        "--model_name_or_path", str(tmp_path / "base"), "--dataset", str(tmp_path / "pairs.jsonl"),
        "--max_length", "48", "--validation_fraction", "0", "--reconstruction_weight", "0",
        "--max_steps", "2", "--per_device_train_batch_size", "4", "--save_strategy", "no",
        "--eval_strategy", "no", "--report_to", "none", "--use_cpu", "true", "--disable_tqdm", "true",
        "--dataloader_pin_memory", "false",
    ]  # fmt: skip


def test_a_ranking_run_trains_and_records_its_objective(tmp_path):
    argv = two_step_run(tmp_path)
    plain = train_union.main([*argv, "--output_dir", str(tmp_path / "plain")])
    ranked = train_union.main(
        [*argv, "--output_dir", str(tmp_path / "ranked"), "--ranking_loss", "margin", "--ranking_weight", "1"]
    )
    assert plain["train_loss"] != pytest.approx(ranked["train_loss"])
    record = json.loads((tmp_path / "ranked" / "run_record.json").read_text())
    assert (record["--ranking_loss"], record["--ranking_weight"], record["--severity_source"]) == (
        "margin",
        1.0,
        "perturbations",
    )
    assert "--ranking_loss" not in json.loads((tmp_path / "plain" / "run_record.json").read_text())
    assert (
        "| ranking loss (weight; severity from) | margin (1.0; perturbations) |"
        in (tmp_path / "ranked" / "README.md").read_text()
    )
    assert "ranking loss" not in (tmp_path / "plain" / "README.md").read_text()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--ranking_loss", "margin"],
            r"--ranking_loss margin with --ranking_weight 0\.0: a ranking loss needs",
        ),
        (
            ["--ranking_weight", "0.5"],
            r"--ranking_loss none with --ranking_weight 0\.5: .*needs --ranking_loss",
        ),
        (
            ["--ranking_loss", "margin", "--ranking_weight", "1.5"],
            r"--ranking_weight must be between 0 and 1",
        ),
        (
            ["--ranking_loss", "margin", "--ranking_weight", "nan"],
            r"--ranking_weight must be between 0 and 1",
        ),
        (["--ranking_loss", "listwise"], r"--ranking_loss/--ranking-loss: invalid choice: 'listwise'"),
        (["--severity_source", "length"], r"--severity_source/--severity-source: invalid choice: 'length'"),
    ],
)
def test_bad_ranking_options_are_refused_by_name_before_any_loading(tmp_path, capsys, flags, message):
    argv = ["--dataset", str(tmp_path / "missing.jsonl"), "--output_dir", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_:
        train_union.main([*argv, *flags])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "o").exists()
