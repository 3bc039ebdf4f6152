"""Distillation: the teachers' mean score added to training rows, and a student's loss taught by it."""

from __future__ import annotations

import json
import re
import shutil

import datasets
import pytest
import tiny_models
import torch
from safetensors.torch import load_file
from test_train_union import write_pairs
from torch.nn import functional as F
from transformers import AutoTokenizer, BertForSequenceClassification, BertTokenizer, TrainingArguments

from story_quality.training import distillation, teacher_scores, train_union
from story_quality.training.distillation import (
    DistillationTerm,
    add_teacher_scores,
    soft_cross_entropy,
    teacher_probabilities,
    teacher_sha256,
)
from story_quality.training.negatives import build as negatives_build
from story_quality.training.negatives.build import build_union_dataset
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.training.union_trainer import UnionTrainer
from story_quality.union.normalization import ROC_STORIES, WRITING_PROMPTS

MAX_LENGTH = 24  # shorter than some rows, so the head-kept reading is exercised


def test_soft_cross_entropy_is_the_label_cross_entropy_at_certain_teachers_and_the_formula_between():
    logits = torch.tensor([[0.3, -1.2], [2.0, 0.5], [-0.4, 0.9]])
    labels = torch.tensor([1, 0, 1])
    assert soft_cross_entropy(logits, labels.float()).item() == pytest.approx(
        F.cross_entropy(logits, labels).item(), abs=1e-6
    )
    teacher = torch.tensor([0.7, 0.2, 0.5])
    log_p = F.log_softmax(logits, dim=-1)
    by_hand = -sum(t * log_p[i, 1] + (1 - t) * log_p[i, 0] for i, t in enumerate(teacher.tolist())) / 3
    assert soft_cross_entropy(logits, teacher).item() == pytest.approx(float(by_hand), abs=1e-6)


@pytest.fixture(scope="module")
def teachers(tmp_path_factory):
    root = tmp_path_factory.mktemp("teachers")
    return [
        tiny_models.save_union_checkpoint(
            root / name, normalization=ROC_STORIES.to_dict(), max_length=64, seed=seed
        )
        for name, seed in (("a", 1), ("b", 2))
    ]


def rows(texts: list[str]) -> datasets.Dataset:
    return datasets.Dataset.from_dict({"text": texts, "label": [i % 2 for i in range(len(texts))]})


def reference_probability(checkpoint, text: str) -> float:
    """P(human) of one text the slow way: the plain model on the tokenizer's head-kept encoding."""
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = BertForSequenceClassification.from_pretrained(checkpoint).eval()
    encoded = tokenizer(text, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
    with torch.no_grad():
        return torch.softmax(model(**encoded).logits, dim=-1)[0, 1].item()


def test_each_row_gets_the_mean_of_the_teachers_probabilities_on_its_text_read_as_training_reads_it(
    teachers,
):
    words = tiny_models.WORDS
    long_text = " ".join(words[i % len(words)] for i in range(60))  # cut at MAX_LENGTH pieces
    texts = ["the dog ran to the school .", long_text, "[MALE] ate the cake .", "the dog ran to the school ."]
    taught = add_teacher_scores(rows(texts), [str(t) for t in teachers], MAX_LENGTH, batch_size=2)
    expected = [sum(reference_probability(t, text) for t in teachers) / 2 for text in texts]
    assert taught["teacher"] == pytest.approx(expected, abs=1e-5)
    assert taught["text"] == texts and taught["label"] == [0, 1, 0, 1]
    one = add_teacher_scores(rows(texts), [str(teachers[0])], MAX_LENGTH, batch_size=2)
    assert one["teacher"] != pytest.approx(taught["teacher"], abs=1e-3)  # the second teacher counts


def test_the_teacher_is_moved_to_the_device_the_rows_are_scored_on(teachers, monkeypatch):
    # The scorer loads on the CPU; scoring on another device ("meta" stands in for a GPU here) must
    # move its model there, or the first batch fails with tensors on two devices.
    seen = {}

    def record(logits_fn, encoded, **options):
        seen["inputs"] = options["device"]
        seen["model"] = next(scorer.model.parameters()).device
        return [0.5] * len(encoded.input_ids)

    monkeypatch.setattr(distillation, "class_probabilities", record)
    scorer = distillation.row_scorer(str(teachers[0]), None, MAX_LENGTH, "rows")
    teacher_probabilities(scorer, ["the dog ran ."], MAX_LENGTH, 2, torch.device("meta"))
    assert seen == {"inputs": torch.device("meta"), "model": torch.device("meta")}


def test_rows_that_carry_teacher_scores_or_another_normalisation_or_a_longer_window_are_refused(teachers):
    with pytest.raises(ValueError, match="already has a 'teacher' column"):
        add_teacher_scores(rows(["a b"]).add_column("teacher", [0.5]), [str(teachers[0])], MAX_LENGTH)
    with pytest.raises(ValueError, match=r"Teacher .*/b reads at most 64 word pieces; max_length is 65"):
        add_teacher_scores(rows(["a b"]), [str(teachers[0]), str(teachers[1])][::-1], 65)
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        add_teacher_scores(rows(["a b"]), [str(teachers[0])], MAX_LENGTH, batch_size=0)
    built = build_union_dataset(
        datasets.Dataset.from_dict({"text": ["Ken went home. He slept. Then he woke up and ate."] * 2}),
        normalization=WRITING_PROMPTS,
        seed=1,
        lexicon=Lexicon(tagger="heuristic", wordnet="none"),
    )
    with pytest.raises(
        ValueError, match=r"Teacher .*/a records normalisation .* rows of wp-rows were built with"
    ):
        add_teacher_scores(built, [str(teachers[0])], MAX_LENGTH, source="wp-rows")
    for same in (str(teachers[0]), f"{teachers[0]}/", str(teachers[0].parent / "." / teachers[0].name)):
        with pytest.raises(ValueError, match=r"--teacher .* is --teacher .*/a again \(the same folder\)"):
            add_teacher_scores(rows(["a b"]), [str(teachers[0]), same], MAX_LENGTH)
    copy = shutil.copytree(teachers[0], teachers[0].parent / "a-copy")  # one model, another folder name
    with pytest.raises(ValueError, match=r"--teacher .*/a-copy is --teacher .*/a again \(the same weights"):
        add_teacher_scores(rows(["a b"]), [str(teachers[0]), str(teachers[1]), str(copy)], MAX_LENGTH)
    shutil.rmtree(copy)
    with pytest.raises(ValueError, match=r"rows-x has no 'text' column \(it has \['story'\]\)"):
        add_teacher_scores(
            datasets.Dataset.from_dict({"story": ["a b"]}), [str(teachers[0])], MAX_LENGTH, source="rows-x"
        )
    with pytest.raises(ValueError, match="rows-x holds no rows"):
        add_teacher_scores(rows([]), [str(teachers[0])], MAX_LENGTH, source="rows-x")


def test_the_command_writes_the_rows_and_a_summary_and_refuses_bad_input_by_name(teachers, tmp_path, capsys):
    rows(["the dog ran .", "the cat ate ."]).save_to_disk(str(tmp_path / "rows"))
    rows([]).save_to_disk(str(tmp_path / "empty"))
    base = ["--dataset", str(tmp_path / "rows"), "--teacher", str(teachers[0]), "--output_dir"]
    for argv, message in (
        ([*base, str(tmp_path / "rows")], "--output_dir .*rows is the input"),
        (
            ["--dataset", str(tmp_path / "empty"), *base[2:], str(tmp_path / "o")],
            "--dataset .*empty: the saved corpus holds no rows",
        ),
        ([*base, str(tmp_path / "o"), "--device", "bogus"], "device 'bogus' is not a device name"),
        (
            ["--dataset", str(tmp_path / "none"), *base[2:], str(tmp_path / "o")],
            "--dataset .*none: not a corpus",
        ),
        ([*base[:3], str(tmp_path / "no-teacher"), "--output_dir", str(tmp_path / "o")], "no-teacher"),
        ([*base, str(tmp_path / "rows" / "dataset_info.json" / "o")], "--output_dir .*o: cannot write there"),
        ([*base, str(tmp_path / "o"), "--max_length", "8"], "--max_length must be at least 16, got 8"),
        ([*base, str(tmp_path / "o"), "--batch_size", "0"], "--batch_size must be at least 1, got 0"),
    ):
        with pytest.raises(SystemExit):
            teacher_scores.main(argv)
        assert re.search(message, capsys.readouterr().err), message
    assert not (tmp_path / "o").exists()
    out = tmp_path / "taught"
    teacher_scores.main([*base, str(out), "--max_length", str(MAX_LENGTH)])
    summary = json.loads((out / teacher_scores.SUMMARY).read_text())
    saved = datasets.load_from_disk(str(out))
    assert summary["rows"] == 2 and summary["teachers"] == [str(teachers[0])] and summary["max_length"] == 24
    assert summary["mean_teacher_score"] == pytest.approx(sum(saved["teacher"]) / 2)
    assert summary["teacher_sha256"] == teacher_sha256(saved)


def test_the_trainer_replaces_the_weighted_share_of_the_label_loss_by_the_teachers():
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_models.bert_config(40, num_labels=2)).eval()
    trainer = UnionTrainer(
        model=model,
        args=TrainingArguments(output_dir="unused", report_to="none"),
        terms=[DistillationTerm(0.25)],
    )
    inputs = {"input_ids": torch.tensor([[2, 5, 6, 3], [2, 7, 3, 0]]), "labels": torch.tensor([1, 0])}
    inputs["attention_mask"] = (inputs["input_ids"] != 0).long()
    logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits
    teacher = torch.tensor([0.6, 0.3])
    expected = 0.75 * F.cross_entropy(logits, inputs["labels"]) + 0.25 * soft_cross_entropy(logits, teacher)
    loss = trainer.compute_loss(model, {**inputs, "teacher": teacher})
    assert loss.item() == pytest.approx(expected.item(), abs=1e-6)
    assert trainer.compute_loss(model, dict(inputs)).item() == pytest.approx(
        F.cross_entropy(logits, inputs["labels"]).item(), abs=1e-6
    )


@pytest.fixture(scope="module")
def student_start(tmp_path_factory):
    """A tiny BERT start and pairs with three teacher columns: the labels, their opposite, none."""
    root = tmp_path_factory.mktemp("student")
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab=tiny_models.vocabulary(True), do_lower_case=True)
    config = tiny_models.bert_config(
        len(tokenizer), max_position_embeddings=64, id2label=tiny_models.UNION_LABELS
    )
    BertForSequenceClassification(config).save_pretrained(root / "base")  # a classifier start is UNION's
    tokenizer.save_pretrained(root / "base")
    write_pairs(root / "pairs.jsonl", 12, seed=3)
    lines = [json.loads(line) for line in (root / "pairs.jsonl").read_text().splitlines()]
    for name, teacher in (
        ("as-labels", lambda row: float(row["label"])),
        ("opposite", lambda row: 1.0 - row["label"]),
    ):
        with open(root / f"{name}.jsonl", "w") as handle:
            handle.writelines(json.dumps({**row, "teacher": teacher(row)}) + "\n" for row in lines)
    return root


def student_args(root, pairs: str, output, weight: str) -> list[str]:
    return [
        "--model_name_or_path", str(root / "base"), "--dataset", str(root / pairs), "--output_dir", str(output),
        "--max_length", "48", "--validation_fraction", "0", "--reconstruction_weight", "0",
        "--distillation_weight", weight, "--max_steps", "3", "--per_device_train_batch_size", "4",
        "--learning_rate", "1e-3", "--save_strategy", "no", "--eval_strategy", "no", "--report_to", "none",
        "--use_cpu", "true", "--disable_tqdm", "true", "--dataloader_pin_memory", "false", "--seed", "7",
    ]  # fmt: skip


def trained_weights(root, pairs: str, output, weight: str) -> dict[str, torch.Tensor]:
    train_union.main(student_args(root, pairs, output, weight))
    return load_file(output / "model.safetensors")


def test_a_student_learns_from_the_teacher_column_and_only_as_much_as_its_weight_says(
    student_start, tmp_path
):
    plain = trained_weights(student_start, "pairs.jsonl", tmp_path / "plain", "0")
    agreeing = trained_weights(student_start, "as-labels.jsonl", tmp_path / "agreeing", "0.5")
    opposite = trained_weights(student_start, "opposite.jsonl", tmp_path / "opposite", "0.5")
    ignored = trained_weights(student_start, "opposite.jsonl", tmp_path / "ignored", "0")
    # a teacher certain of every label teaches the labels: the run is the plain one
    assert all(torch.allclose(plain[k], agreeing[k], atol=1e-5) for k in plain)
    # at weight 0 the column is read by nothing
    assert all(torch.equal(plain[k], ignored[k]) for k in plain)
    # a teacher against every label pulls the head the other way
    assert not torch.allclose(plain["classifier.weight"], opposite["classifier.weight"], atol=1e-4)
    card = (tmp_path / "opposite" / "README.md").read_text()
    assert "| distillation weight (share of the loss from the teachers' scores) | 0.5 |" in card
    assert "distillation weight" not in (tmp_path / "plain" / "README.md").read_text()


def test_a_distillation_weight_without_teacher_scores_or_out_of_range_is_refused(
    student_start, tmp_path, monkeypatch, capsys
):
    with pytest.raises(
        ValueError, match=r"--distillation_weight 0\.5 needs a 'teacher' column, which .*pairs"
    ):
        train_union.main(student_args(student_start, "pairs.jsonl", tmp_path / "run", "0.5"))
    stories = [{"text": "Ken went home. He slept. He woke up.", "teacher": 0.5}] * 4
    (tmp_path / "stories.jsonl").write_text("".join(json.dumps(row) + "\n" for row in stories))

    def unsampled(*args, **kwargs):
        raise AssertionError("stories were negative-sampled before the distillation data was checked")

    monkeypatch.setattr(negatives_build, "build_union_dataset", unsampled)
    with pytest.raises(
        ValueError,
        match=r"stories\.jsonl holds no UNION pairs \(it has \['text', 'teacher'\]\): --distillation_weight 0\.5 reads",
    ):
        # an absolute path joined to the fixture's folder stays itself
        train_union.main(
            student_args(student_start, str(tmp_path / "stories.jsonl"), tmp_path / "run", "0.5")
        )
    # a range error is a usage error (exit 2) naming the option
    with pytest.raises(SystemExit) as stopped:
        train_union.main(student_args(student_start, "as-labels.jsonl", tmp_path / "run2", "1.5"))
    assert stopped.value.code == 2
    assert "--distillation_weight must be between 0 and 1 (0: off), got 1.5" in capsys.readouterr().err
    assert not (tmp_path / "run2").exists()
    lines = (student_start / "as-labels.jsonl").read_text().splitlines()
    for name, value, message in (
        (
            "above-one",
            1.5,
            r"1 rows' 'teacher' score is no probability between 0 and 1, first 1\.5 for the text",
        ),
        ("words", "high", r"the 'teacher' column holds no number per row"),
        ("missing", None, r"1 rows' 'teacher' score is no probability between 0 and 1, first missing"),
    ):
        rows = [json.loads(line) for line in lines]
        rows[-1]["teacher"] = value
        (student_start / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
        with pytest.raises(ValueError, match=rf"{name}\.jsonl: {message}"):
            train_union.main(student_args(student_start, f"{name}.jsonl", tmp_path / name, "0.5"))


def test_the_teacher_sha256_reads_every_score():
    scores = [i / 13 for i in range(12)]
    rows = datasets.Dataset.from_dict({"text": ["a"] * 12, "teacher": scores})
    moved_last = datasets.Dataset.from_dict({"text": ["a"] * 12, "teacher": [*scores[:-1], 0.5]})
    assert teacher_sha256(rows) == teacher_sha256(rows.select(range(12)))
    assert teacher_sha256(rows) != teacher_sha256(moved_last)


def test_a_distilled_run_resumes_only_on_the_teacher_scores_it_was_trained_with(student_start, tmp_path):
    out = tmp_path / "run"
    saving = ["--save_strategy", "steps", "--save_steps", "2"]
    train_union.main([*student_args(student_start, "opposite.jsonl", out, "0.5"), *saving])
    record = json.loads((out / "run_record.json").read_text())
    rows = datasets.load_dataset("json", data_files=str(student_start / "opposite.jsonl"), split="train")
    assert record["teacher scores of --dataset (sha256)"] == teacher_sha256(rows)
    assert record["--distillation_weight"] == 0.5
    same = [*student_args(student_start, "opposite.jsonl", out, "0.5"), *saving]
    train_union.main([*same, "--resume_from_checkpoint", str(out / "checkpoint-2")])  # the same rows resume
    # the same labels and texts, other teacher scores: not the run being resumed
    resumed = [*student_args(student_start, "as-labels.jsonl", out, "0.5"), *saving]
    with pytest.raises(ValueError, match=r"teacher scores of --dataset \(sha256\)"):
        train_union.main([*resumed, "--resume_from_checkpoint", str(out / "checkpoint-2")])
