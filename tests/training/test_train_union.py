"""train_union.py end to end through ``accelerate launch`` on a tiny BERT, and its pieces in-process."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys

import datasets
import evaluate
import pytest
import tiny_models
import torch
from conftest import REPO
from huggingface_hub import ModelCard
from safetensors import safe_open
from scipy import stats
from transformers import AutoTokenizer, BertForMaskedLM, BertForSequenceClassification, BertTokenizer

from story_quality.training import run_setup, train_union, union_arguments, union_pairs
from story_quality.union.normalization import CONFIG_KEY, PLACEHOLDERS, ROC_STORIES, WRITING_PROMPTS

MAX_LENGTH = 48
# A base vocabulary without the name placeholders: training must add them and grow the model.
BASE_VOCABULARY = {
    piece: i for i, piece in enumerate(p for p in tiny_models.vocabulary(True) if p not in PLACEHOLDERS)
}
STEPS = 6


def accelerate_launch(script: str, *args: str) -> subprocess.CompletedProcess:
    """Run a training script the way users do, on one CPU process, with the tests' offline env."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--quiet", "--cpu", "--num_processes", "1",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        "--num_cpu_threads_per_process", "1", str(REPO / "training" / script), *args,
    ]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def story(rng: random.Random) -> list[str]:
    words = tiny_models.WORDS
    return [
        " ".join([rng.choice(PLACEHOLDERS)] + [rng.choice(words) for _ in range(rng.randint(2, 5))]) + " ."
        for _ in range(5)
    ]


def write_pairs(path, n_stories: int, seed: int = 0) -> None:
    """UNION pairs with the training-data pipeline's columns: a human story and a reordered copy."""
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for index in range(n_stories):
            sentences = story(rng)
            later = sentences[1:]
            rng.shuffle(later)
            original, corrupted = " ".join(sentences), " ".join([sentences[0], *later])
            for text, label, corruptions in ((original, 1, []), (corrupted, 0, ["reordering"])):
                row = {"text": text, "label": label, "original": original, "context": sentences[0]}
                handle.write(json.dumps({**row, "corruptions": corruptions, "story_index": index}) + "\n")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A tiny uncased BERT whose vocabulary lacks the placeholders, pairs, annotated stories."""
    root = tmp_path_factory.mktemp("union-train")
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab=BASE_VOCABULARY, do_lower_case=True)
    BertForMaskedLM(tiny_models.bert_config(len(tokenizer), max_position_embeddings=64)).save_pretrained(
        root / "base"
    )
    tokenizer.save_pretrained(root / "base")
    write_pairs(root / "pairs.jsonl", 20)
    rng = random.Random(1)
    with open(root / "annotated.txt", "w") as handle:
        for i in range(10):
            votes = " ".join(str(rng.randint(0, 1)) for _ in range(7))
            handle.write(f"{100 + i} ||| {' '.join(story(rng))} ||| {votes}\n")
    return root


def train_args(workdir, output, *extra: str) -> list[str]:
    return [
        "--model_name_or_path", str(workdir / "base"), "--dataset", str(workdir / "pairs.jsonl"),
        "--annotated_file", str(workdir / "annotated.txt"), "--output_dir", str(output),
        "--max_length", str(MAX_LENGTH), "--validation_fraction", "0.2", "--max_steps", str(STEPS),
        "--per_device_train_batch_size", "4", "--save_strategy", "steps", "--save_steps", "3",
        "--eval_strategy", "steps", "--eval_steps", "3", "--logging_steps", "2",
        "--dataloader_pin_memory", "false", "--disable_tqdm", "true", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def trained(workdir):
    output = workdir / "run"
    run = accelerate_launch("train_union.py", *train_args(workdir, output))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return output


def test_checkpoint_is_a_plain_classifier_the_metric_can_load(trained):
    with safe_open(trained / "model.safetensors", "pt") as saved:
        keys = list(saved.keys())
    assert "classifier.weight" in keys and not [k for k in keys if k.startswith("cls.")]
    model, info = BertForSequenceClassification.from_pretrained(trained, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    assert model.config.id2label == {0: "perturbed", 1: "human"}
    assert getattr(model.config, CONFIG_KEY) == ROC_STORIES.to_dict()
    tokenizer = AutoTokenizer.from_pretrained(trained)
    assert [tokenizer.tokenize(tag) for tag in PLACEHOLDERS] == [[tag] for tag in PLACEHOLDERS]
    assert model.config.vocab_size == len(tokenizer) == len(BASE_VOCABULARY) + len(PLACEHOLDERS)
    assert tokenizer.model_max_length == MAX_LENGTH
    # the resumable checkpoints keep the reconstruction head
    with safe_open(trained / f"checkpoint-{STEPS}" / "model.safetensors", "pt") as saved:
        assert any(k.startswith("cls.predictions") for k in saved.keys())
    assert json.loads((trained / "trainer_state.json").read_text())["global_step"] == STEPS


def test_union_metric_scores_with_it_and_reproduces_the_run_correlations(trained, workdir):
    union = evaluate.load(str(REPO / "metrics" / "union"), str(trained))
    lines = [line.split("|||") for line in (workdir / "annotated.txt").read_text().splitlines()]
    results = union.compute(predictions=[story.strip() for _, story, _ in lines])
    assert len(results["scores"]) == len(lines) and all(0 <= s <= 1 for s in results["scores"])
    human = [sum(map(int, votes.split())) / 7 for _, _, votes in lines]
    reported = json.loads((trained / "annotated_results.json").read_text())
    assert reported["annotated_pearson"] == pytest.approx(
        stats.pearsonr(results["scores"], human)[0], abs=1e-5
    )
    assert reported["annotated_spearman"] == pytest.approx(
        stats.spearmanr(results["scores"], human)[0], abs=1e-5
    )
    assert reported["annotated_kendall"] == pytest.approx(
        stats.kendalltau(results["scores"], human)[0], abs=1e-5
    )


def test_model_card_carries_the_run_measurements(trained):
    card = ModelCard.load(trained / "README.md")
    measured = json.loads((trained / "all_results.json").read_text())
    by_metric = {r.metric_type: r.metric_value for r in card.data.eval_results}
    assert by_metric == {
        "accuracy": measured["eval_accuracy"],
        "pearson": measured["annotated_pearson"],
        "spearman": measured["annotated_spearman"],
        "kendall": measured["annotated_kendall"],
    }
    # named as the Trainer names a run: the output folder; a local base that records no Hub id has none
    assert card.data.model_name == "run" and card.data.base_model is None
    assert f"| optimisation steps | {STEPS} |" in card.text
    assert f"- training examples: {2 * 16}" in card.text  # 20 stories, 4 held out with their copies
    # the base model, a local folder that records no Hub id, and the pairs file by name, never by path
    assert str(trained.parent) not in card.text and "It is `a local checkpoint`" in card.text
    assert "- source: pairs.jsonl" in card.text and "gets one corrupted copy:" in card.text
    assert "{{" not in card.text and "{%" not in card.text


def test_resume_then_push_without_network_fails_clearly_after_saving(trained, workdir):
    resumed = shutil.copytree(trained, workdir / "resumed")
    before = (resumed / "model.safetensors").stat().st_mtime_ns
    run = accelerate_launch(
        "train_union.py",
        *train_args(workdir, resumed, "--resume_from_checkpoint", "last", "--push_to_hub", "true"),
        "--max_steps", str(STEPS + 2), "--hub_model_id", "someone/union-test",
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode != 0
    assert "Could not push" in output and "someone/union-test" in output and "saved locally" in output
    assert "Traceback" not in output
    assert output.count("{'loss'") == 1  # resumed from checkpoint-6: only the step-8 loss is logged
    assert json.loads((resumed / "trainer_state.json").read_text())["global_step"] == STEPS + 2
    assert (resumed / "model.safetensors").stat().st_mtime_ns > before
    assert "| optimisation steps | 8 |" in (resumed / "README.md").read_text()


# --- in-process pieces -------------------------------------------------------------------------


def test_help_explains_the_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_union.main(["--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for flag in ("--reconstruction_weight", "--annotated_file", "--normalization", "--push_to_hub"):
        assert flag in text
    assert "0 turns it off" in text and "ID ||| story ||| votes" in text


def test_arguments_from_a_json_file(tmp_path):
    config = {"dataset": "pairs.jsonl", "output_dir": str(tmp_path / "o"), "reconstruction_weight": 0.0}
    (tmp_path / "run.json").write_text(json.dumps({**config, "normalization": "wp"}))
    parser = train_union.HfArgumentParser(
        (
            union_arguments.ModelArguments,
            union_arguments.DataArguments,
            union_arguments.UnionTrainingArguments,
        )
    )
    model_args, data_args, args = run_setup.parse_arguments(parser, [str(tmp_path / "run.json")])
    assert (model_args.reconstruction_weight, data_args.normalization, data_args.dataset) == (
        0.0,
        "wp",
        "pairs.jsonl",
    )
    # UNION's optimiser defaults
    assert (args.learning_rate, args.weight_decay, args.warmup_steps) == (5e-5, 0.01, 0.1)
    assert (args.per_device_train_batch_size, args.max_grad_norm, model_args.max_length) == (10, 1.0, 200)


@pytest.mark.parametrize("from_json", [False, True])
def test_accelerate_launch_cpu_keeps_the_batches_on_the_cpu_of_a_gpu_machine(
    tmp_path, monkeypatch, from_json
):
    # `accelerate launch --cpu` sets ACCELERATE_USE_CPU; TrainingArguments alone would still
    # send batches to the GPU while the model stays on the CPU (seen on an H100).
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    options = {"dataset": "pairs.jsonl", "output_dir": str(tmp_path / "o")}
    argv = [f"--{key}={value}" for key, value in options.items()]
    if from_json:
        (tmp_path / "run.json").write_text(json.dumps(options))
        argv = [str(tmp_path / "run.json")]
    parser = train_union.HfArgumentParser(
        (
            union_arguments.ModelArguments,
            union_arguments.DataArguments,
            union_arguments.UnionTrainingArguments,
        )
    )
    *_, args = run_setup.parse_arguments(parser, argv)
    assert args.use_cpu and args.device.type == "cpu"


def test_held_out_split_keeps_pairs_together_and_is_seeded(tmp_path):
    write_pairs(tmp_path / "p.jsonl", 30)
    pairs = datasets.load_dataset("json", data_files=str(tmp_path / "p.jsonl"), split="train")
    train, held = union_pairs.split_held_out(pairs, 0.2, seed=3)
    assert len(held) == 12 and len(train) == 48
    assert not set(train["story_index"]) & set(held["story_index"])
    assert sorted(held["label"]) == [0] * 6 + [1] * 6
    assert union_pairs.split_held_out(pairs, 0.2, seed=3)[1]["text"] == held["text"]
    assert union_pairs.split_held_out(pairs, 0.2, seed=4)[1]["story_index"] != held["story_index"]
    assert union_pairs.split_held_out(pairs, 0.0, seed=3) == (pairs, None)


def test_annotated_file_errors_name_the_line(tmp_path):
    path = tmp_path / "ant.txt"
    path.write_text("1 ||| a story . ||| 1 0 1\n2 ||| another story . ||| 1 x 1\n")
    with pytest.raises(ValueError, match=r"ant.txt:2: votes must be"):
        train_union.read_annotated_file(str(path))
    path.write_text("1 ||| a story . ||| 1 0 1\n2 ||| fine . ||| 1 1 1\n3 | no separators\n")
    with pytest.raises(ValueError, match=r"ant.txt:3:"):
        train_union.read_annotated_file(str(path))
    path.write_text("".join(f"{i} ||| story {i} . ||| 1 1\n" for i in range(2)))
    with pytest.raises(ValueError, match="at least 3"):
        train_union.read_annotated_file(str(path))
    path.write_text("".join(f"{i} ||| story {i} . ||| {i % 2} 1\n" for i in range(4)))
    assert train_union.read_annotated_file(str(path)).human_scores.tolist() == [0.5, 1.0, 0.5, 1.0]


def test_dataset_with_wrong_labels_is_rejected(tmp_path):
    write_pairs(tmp_path / "p.jsonl", 3)
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    rows[1]["label"] = 2
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = union_arguments.DataArguments(dataset=str(tmp_path / "bad.jsonl"))
    with pytest.raises(ValueError, match=r"label must be 0 \(perturbed\) or 1 \(human\), found \[0, 1, 2\]"):
        union_pairs.load_pairs(data.dataset, data, ROC_STORIES, seed=0)


def test_stories_are_negative_sampled_on_the_fly_with_the_recorded_normalisation(tmp_path):
    rng = random.Random(2)
    stories = [" ".join(s.capitalize() for s in story(rng)) for _ in range(6)]
    (tmp_path / "stories.jsonl").write_text("".join(json.dumps({"text": s}) + "\n" for s in stories))
    data = union_arguments.DataArguments(dataset=str(tmp_path / "stories.jsonl"))
    pairs = union_pairs.load_pairs(data.dataset, data, ROC_STORIES, seed=0)
    assert set(union_pairs.PAIR_COLUMNS) <= set(pairs.column_names)
    assert sorted(pairs["label"]) == [0] * (len(pairs) // 2) + [1] * (len(pairs) // 2) and len(pairs) >= 2
    assert all(text == text.lower() or "[" in text for text in pairs["text"])
    pairs.save_to_disk(str(tmp_path / "built"))
    data = union_arguments.DataArguments(dataset=str(tmp_path / "built"))
    assert len(union_pairs.load_pairs(data.dataset, data, ROC_STORIES, seed=0)) == len(pairs)
    with pytest.raises(ValueError, match="built with normalisation"):
        union_pairs.load_pairs(data.dataset, data, WRITING_PROMPTS, seed=0)


def test_a_kept_checkpoint_exports_as_the_classifier_the_run_published(trained, tmp_path):
    from story_quality.training.run_setup import trainer_checkpoints
    from story_quality.training.union_model import export_trainer_checkpoint

    assert [step for step, _ in trainer_checkpoints(trained)] == [3, STEPS]  # by step, not by name
    exported = export_trainer_checkpoint(trained / f"checkpoint-{STEPS}", tmp_path / "e", ROC_STORIES)
    with (
        safe_open(trained / "model.safetensors", "pt") as final,
        safe_open(exported / "model.safetensors", "pt") as mine,
    ):
        assert sorted(mine.keys()) == sorted(final.keys())
        assert all(torch.equal(mine.get_tensor(k), final.get_tensor(k)) for k in final.keys())
    config = json.loads((exported / "config.json").read_text())
    assert config[CONFIG_KEY] == ROC_STORIES.to_dict() and config["architectures"] == [
        "BertForSequenceClassification"
    ]
    tokenizer = AutoTokenizer.from_pretrained(exported)
    assert tokenizer.get_vocab() == AutoTokenizer.from_pretrained(trained).get_vocab()
    assert tokenizer.model_max_length == MAX_LENGTH
    earlier = export_trainer_checkpoint(trained / "checkpoint-3", tmp_path / "e3", ROC_STORIES)
    with (
        safe_open(earlier / "model.safetensors", "pt") as third,
        safe_open(exported / "model.safetensors", "pt") as sixth,
    ):
        assert not torch.equal(third.get_tensor("classifier.weight"), sixth.get_tensor("classifier.weight"))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max_length", "0"], r"--max_length must be between 16 and 4096 word pieces, got 0"),
        (["--max_length", "8"], r"--max_length must be between 16 and 4096 word pieces, got 8"),
        (
            ["--reconstruction_weight", "-1"],
            r"--reconstruction_weight must be a finite number >= 0 .*got -1.0",
        ),
        (
            ["--reconstruction_weight", "nan"],
            r"--reconstruction_weight must be a finite number >= 0 .*got nan",
        ),
        (["--learning_rate", "nan"], r"--learning_rate must be a finite number > 0, got nan"),
        (["--learning_rate", "0"], r"--learning_rate must be a finite number > 0, got 0.0"),
        (["--num_train_epochs", "-1"], r"--num_train_epochs must be a finite number > 0, got -1.0"),
    ],
)
def test_bad_numbers_are_refused_before_any_loading(tmp_path, capsys, flags, message):
    argv = ["--dataset", str(tmp_path / "missing.jsonl"), "--output_dir", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_:  # a usage error, exit 2 as argparse gives, not a traceback
        train_union.main([*argv, *flags])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    # one line: the Trainer's arguments would make argparse's usage bury the message
    assert err.count("\n") == 1 and err.startswith(f"{os.path.basename(sys.argv[0])}: error: --")
    assert re.search(message, err)
    assert not (tmp_path / "o").exists()


def test_a_window_beyond_the_models_positions_is_refused_before_training(workdir, tmp_path):
    with pytest.raises(ValueError, match=r"--max_length 100 exceeds the 64 positions of .*pass at most 64"):
        train_union.main(train_args(workdir, tmp_path / "o", "--max_length", "100"))


def test_a_folder_that_is_not_a_built_corpus_names_the_build_command(workdir, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    args = train_args(workdir, tmp_path / "o")
    args[args.index("--dataset") + 1] = str(tmp_path / "notes")
    with pytest.raises(ValueError, match=r"is a folder but not a saved dataset .*build_union_data.py"):
        train_union.main(args)


def other_base(workdir) -> str:
    """A BERT of another shape (wider feed-forward layers) with the same vocabulary."""
    folder = workdir / "other-base"
    if not folder.exists():
        tokenizer = BertTokenizer(vocab=BASE_VOCABULARY, do_lower_case=True)
        config = tiny_models.bert_config(len(tokenizer), max_position_embeddings=64)
        config.intermediate_size = 48
        BertForMaskedLM(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("--max_length", r"--max_length 32 \(the run used 48\)"),
        ("--dataset", r"training pairs of --dataset \(sha256\) '\w+' \(the run used '\w+'\)"),
        ("--model_name_or_path", r"--model_name_or_path .*other-base' \(the run used .*base'\)"),
        ("model without a record", r"holds another model than --model_name_or_path .*intermediate_size 48 "),
    ],
)
def test_resuming_with_another_model_or_data_is_refused_before_training(
    trained, workdir, tmp_path, change, message
):
    """Resuming another model once gave 28 size-mismatch lines; another --dataset or --max_length ran silently."""
    resumed = shutil.copytree(trained, tmp_path / "resumed")
    args = train_args(workdir, resumed, "--resume_from_checkpoint", "last", "--max_steps", str(STEPS + 2))
    if change == "--max_length":
        args[args.index("--max_length") + 1] = "32"
    elif change == "--dataset":
        write_pairs(tmp_path / "other.jsonl", 20, seed=5)
        args[args.index("--dataset") + 1] = str(tmp_path / "other.jsonl")
    else:
        args[args.index("--model_name_or_path") + 1] = other_base(workdir)
        if change == "model without a record":  # a run saved before runs recorded their settings
            (resumed / "run_record.json").unlink()
    before = (resumed / "trainer_state.json").read_text()
    with pytest.raises(ValueError, match=message):
        train_union.main(args)
    assert (resumed / "trainer_state.json").read_text() == before


def test_a_run_records_its_settings_and_data_for_a_resume(trained, workdir):
    from story_quality.training.negatives.corpus_hash import corpus_sha256

    record = json.loads((trained / "run_record.json").read_text())
    data = union_arguments.DataArguments(dataset=str(workdir / "pairs.jsonl"))
    pairs = union_pairs.load_pairs(data.dataset, data, ROC_STORIES, 42)
    train, _ = union_pairs.split_held_out(pairs, 0.2, 42)
    assert record == {
        "--max_length": MAX_LENGTH,
        "--model_name_or_path": str(workdir / "base"),
        "--normalization": "roc",
        "--reconstruction_weight": pytest.approx(0.1),
        "--distillation_weight": 0.0,
        "training pairs of --dataset (sha256)": corpus_sha256(train),
    }
