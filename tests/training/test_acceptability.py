"""CoLA as a second head on a UNION run's encoder: seeded draws, the weighted loss, export without it, the run."""

from __future__ import annotations

import json
import random
import re

import pytest
import tiny_models
import torch
from safetensors.torch import load_file
from test_ranking import two_step_run
from test_train_union import write_pairs
from test_train_union_other_encoders import arguments, mpnet_start  # noqa: F401 (a fixture)
from torch.nn import functional as F
from transformers import BertForSequenceClassification, BertTokenizer, TrainingArguments

from story_quality.training import train_union
from story_quality.training.acceptability import (
    ACCEPTABILITY_HEAD,
    AcceptabilityBatches,
    AcceptabilityTerm,
    acceptability_logits,
    attach_acceptability_head,
    read_acceptability_batches,
)
from story_quality.training.union_model import BertForUnionTraining, UnionDataCollator, export_classifier
from story_quality.training.union_trainer import UnionTrainer
from story_quality.union.normalization import ROC_STORIES


def write_cola(path, n: int, seed: int = 0) -> None:
    """A CoLA-format TSV of tiny sentences: in order (acceptable) or reversed (not)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            words = rng.sample(tiny_models.WORDS, 4)
            good = i % 2 == 0
            sentence = " ".join(words if good else words[::-1]).capitalize() + "."
            handle.write(f"src\t{int(good)}\t{'' if good else '*'}\t{sentence}\n")


def test_draws_visit_every_sentence_once_a_pass_and_repeat_by_seed():
    ids = [[1] * (1 + i % 3) for i in range(7)]
    batches = AcceptabilityBatches(ids, [i % 2 for i in range(7)], batch_size=3, seed=5, pad_id=0)
    positions = [i for draw in range(7) for i in batches.indices(draw)]  # 21 positions: three passes
    passes = [positions[k : k + 7] for k in (0, 7, 14)]
    assert all(sorted(p) == list(range(7)) for p in passes)
    assert passes[0] != passes[1]  # each pass has its own order
    again = AcceptabilityBatches(ids, [i % 2 for i in range(7)], batch_size=3, seed=5, pad_id=0)
    assert [again.indices(d) for d in (6, 2, 4)] == [batches.indices(d) for d in (6, 2, 4)]  # any order
    other = AcceptabilityBatches(ids, [i % 2 for i in range(7)], batch_size=3, seed=6, pad_id=0)
    assert [other.indices(d) for d in range(7)] != [batches.indices(d) for d in range(7)]
    batch = batches.batch(1)
    chosen = batches.indices(1)
    assert batch["attention_mask"].sum(1).tolist() == [len(ids[i]) for i in chosen]
    assert batch["labels"].tolist() == [i % 2 for i in chosen]
    assert batch["input_ids"].shape == (3, max(len(ids[i]) for i in chosen))


def test_sentences_are_normalised_as_the_stories_and_a_bad_file_is_named(tmp_path):
    tokenizer = tiny_models.tokenizer()
    (tmp_path / "cola.tsv").write_text("s\t1\t\tAlice saw the dog\ns\t0\t*\tDog the saw\n", encoding="utf-8")
    batches = read_acceptability_batches(str(tmp_path / "cola.tsv"), tokenizer, ROC_STORIES, 32, 2, 0)
    assert batches.labels == [1, 0]
    assert tokenizer.decode(batches.input_ids[0], skip_special_tokens=False).startswith("[CLS] [FEMALE] saw")
    assert tokenizer.convert_ids_to_tokens(batches.input_ids[0])[-2] == "."  # the stories' end mark
    (tmp_path / "bad.tsv").write_text("s\t2\t\tA sentence.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.tsv, line 1"):
        read_acceptability_batches(str(tmp_path / "bad.tsv"), tokenizer, ROC_STORIES, 32, 2, 0)


def _model_and_batches(tmp_path) -> tuple[BertForUnionTraining, BertTokenizer, AcceptabilityBatches]:
    torch.manual_seed(0)
    tokenizer = tiny_models.tokenizer()
    config = tiny_models.bert_config(
        len(tokenizer), hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    )
    model = BertForUnionTraining(config, reconstruction_weight=0.0)
    write_cola(tmp_path / "cola.tsv", 10)
    batches = read_acceptability_batches(str(tmp_path / "cola.tsv"), tokenizer, ROC_STORIES, 32, 4, 1)
    return model, tokenizer, batches


def test_the_trainer_adds_the_weighted_head_loss_in_training_only(tmp_path):
    model, tokenizer, batches = _model_and_batches(tmp_path)
    attach_acceptability_head(model)
    write_pairs(tmp_path / "pairs.jsonl", 3)
    rows = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    encoded = tokenizer([r["text"] for r in rows], truncation=True, max_length=32)
    features = [
        {"input_ids": ids, "labels": r["label"]} for ids, r in zip(encoded["input_ids"], rows, strict=True)
    ]
    batch = UnionDataCollator(tokenizer)([{**f, "reconstruction_labels": []} for f in features])
    batch.pop("reconstruction_labels")
    args = TrainingArguments(output_dir=str(tmp_path / "unused"), report_to="none", use_cpu=True)
    plain = UnionTrainer(model=model, args=args).compute_loss(model.train(), dict(batch))
    term = AcceptabilityTerm(0.4, batches)
    trainer = UnionTrainer(model=model, args=args, terms=[term])
    head = F.cross_entropy(acceptability_logits(model, batches.batch(0)), batches.batch(0)["labels"])
    first = trainer.compute_loss(model, dict(batch))
    assert first.item() == pytest.approx(plain.item() + 0.4 * head.item(), abs=1e-6)
    second = F.cross_entropy(acceptability_logits(model, batches.batch(1)), batches.batch(1)["labels"])
    assert trainer.compute_loss(model, dict(batch)).item() == pytest.approx(
        plain.item() + 0.4 * second.item(), abs=1e-6
    )  # the next step draws the next batch
    assert term.losses == pytest.approx([head.item(), second.item()])
    evaluated = trainer.compute_loss(model.eval(), dict(batch))
    assert evaluated.item() == pytest.approx(plain.item(), abs=1e-6)  # evaluation never draws
    assert len(term.losses) == 2
    resumed = UnionTrainer(model=model, args=args, terms=[AcceptabilityTerm(0.4, batches)])
    resumed.state.global_step = 1
    assert resumed.terms[0].next_draw(resumed) == 1  # a resumed run draws on where it stopped


def test_the_exported_classifier_leaves_the_head_out(tmp_path):
    model, _, _ = _model_and_batches(tmp_path)
    without = export_classifier(model, ROC_STORIES).state_dict()
    attach_acceptability_head(model)
    assert any(k.startswith(ACCEPTABILITY_HEAD) for k in model.state_dict())
    exported = export_classifier(model, ROC_STORIES)
    assert isinstance(exported, BertForSequenceClassification)
    assert exported.state_dict().keys() == without.keys()
    assert all(torch.equal(exported.state_dict()[k], without[k]) for k in without)


def test_a_run_with_the_head_trains_its_encoder_and_records_it(tmp_path):
    argv = [*two_step_run(tmp_path), "--learning_rate", "1e-3", "--logging_steps", "1"]
    write_cola(tmp_path / "cola.tsv", 20)
    plain = train_union.main([*argv, "--output_dir", str(tmp_path / "plain")])
    both = train_union.main(
        [*argv, "--output_dir", str(tmp_path / "both"), "--acceptability_file", str(tmp_path / "cola.tsv"),
         "--acceptability_weight", "0.5", "--acceptability_batch_size", "5"]
    )  # fmt: skip
    assert "train_acceptability_loss_last_50" in both and "train_acceptability_loss_first_50" not in plain
    saved = json.loads((tmp_path / "both" / "all_results.json").read_text())
    assert saved["acceptability_loss_first_50"] == pytest.approx(both["train_acceptability_loss_first_50"])
    history = json.loads((tmp_path / "both" / "trainer_state.json").read_text())["log_history"]
    assert all(line["acceptability_loss"] > 0 for line in history if "loss" in line)
    assert any("loss" in line for line in history)
    weights = {name: load_file(tmp_path / name / "model.safetensors") for name in ("plain", "both")}
    assert weights["both"].keys() == weights["plain"].keys()  # no head in the metric's folder
    encoder = "bert.encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(weights["both"][encoder], weights["plain"][encoder])  # the head taught the encoder
    record = json.loads((tmp_path / "both" / "run_record.json").read_text())
    assert record["--acceptability_weight"] == 0.5 and record["--acceptability_batch_size"] == 5
    assert re.fullmatch(r"[0-9a-f]{64}", record["--acceptability_file (sha256)"])
    assert "--acceptability_weight" not in json.loads((tmp_path / "plain" / "run_record.json").read_text())
    card = (tmp_path / "both" / "README.md").read_text()
    assert f"| 0.5 (5; {record['--acceptability_file (sha256)']}) |" in card


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--acceptability_weight", "0.5"], r"--acceptability_file None with --acceptability_weight 0\.5"),
        (["--acceptability_file", "COLA"], r"--acceptability_file \S+ with --acceptability_weight 0\.0"),
        (["--acceptability_file", "COLA", "--acceptability_weight", "1.5"], r"must be between 0 and 1"),
        (["--acceptability_file", "COLA", "--acceptability_weight", "nan"], r"must be between 0 and 1"),
        (["--acceptability_file", "MISSING", "--acceptability_weight", "0.5"], r"missing\.tsv: no such file"),
        (
            [
                "--acceptability_file",
                "COLA",
                "--acceptability_weight",
                "0.5",
                "--acceptability_batch_size",
                "0",
            ],
            r"--acceptability_batch_size must be >= 1, got 0",
        ),
    ],
)
def test_bad_acceptability_options_are_refused_by_name_before_any_loading(tmp_path, capsys, flags, message):
    write_cola(tmp_path / "cola.tsv", 4)
    paths = {"COLA": str(tmp_path / "cola.tsv"), "MISSING": str(tmp_path / "missing.tsv")}
    argv = ["--dataset", str(tmp_path / "missing.jsonl"), "--output_dir", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_:
        train_union.main([*argv, *[paths.get(f, f) for f in flags]])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_the_head_on_another_encoder_is_refused_before_reading_pairs(mpnet_start, tmp_path, capsys):  # noqa: F811
    write_cola(tmp_path / "cola.tsv", 4)
    argv = arguments(mpnet_start, tmp_path / "run", "0")
    (tmp_path / "unreadable.jsonl").write_text("not json\n")  # read, it would fail otherwise
    argv[argv.index("--dataset") + 1] = str(tmp_path / "unreadable.jsonl")
    with pytest.raises(SystemExit) as exit_:
        train_union.main(
            [*argv, "--acceptability_file", str(tmp_path / "cola.tsv"), "--acceptability_weight", "0.5"]
        )
    assert exit_.value.code == 2
    assert re.search(
        r"--acceptability_weight trains a head on a BERT encoder.*mpnet", capsys.readouterr().err
    )
