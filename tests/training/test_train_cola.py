"""train_cola.py end to end through ``accelerate launch`` on a tiny cased BERT and CoLA-shaped files."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys

import evaluate
import numpy as np
import pytest
import tiny_models
import torch
from conftest import REPO
from huggingface_hub import ModelCard
from safetensors.torch import load_file, save_file
from test_train_union import accelerate_launch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from story_quality.gruen.checkpoints import LM_CHECKPOINT, PROJECT_COLA_CHECKPOINT
from story_quality.training import train_cola

MAX_LENGTH = 32


def write_cola(path, n: int, seed: int) -> None:
    """CoLA's columns (sentence, label, idx); acceptable sentences end with a full stop."""
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for i in range(n):
            words = " ".join(rng.sample(tiny_models.WORDS, rng.randint(3, 7))).capitalize()
            handle.write(
                json.dumps({"sentence": words + ("." if i % 2 else ""), "label": i % 2, "idx": i}) + "\n"
            )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("cola-train")
    tiny_models.save_masked_lm(root / "base", max_length=64, lowercase=False)
    write_cola(root / "train.jsonl", 32, seed=0)
    write_cola(root / "validation.jsonl", 16, seed=1)
    return root


@pytest.fixture(scope="module")
def trained(workdir):
    output = workdir / "run"
    run = accelerate_launch(
        "train_cola.py",
        "--model_name_or_path", str(workdir / "base"), "--train_file", str(workdir / "train.jsonl"),
        "--validation_file", str(workdir / "validation.jsonl"), "--output_dir", str(output),
        "--max_length", str(MAX_LENGTH), "--max_steps", "4", "--per_device_train_batch_size", "8",
        "--learning_rate", "1e-3", "--dataloader_pin_memory", "false", "--disable_tqdm", "true",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return output


def test_reported_matthews_correlation_is_that_of_the_saved_model(trained, workdir):
    tokenizer = AutoTokenizer.from_pretrained(trained)
    model = AutoModelForSequenceClassification.from_pretrained(trained, use_safetensors=True).eval()
    assert model.config.id2label == {0: "unacceptable", 1: "acceptable"}
    rows = [json.loads(line) for line in (workdir / "validation.jsonl").read_text().splitlines()]
    with torch.no_grad():
        predicted = [
            int(
                model(
                    **tokenizer(r["sentence"], truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
                ).logits.argmax()
            )
            for r in rows
        ]
    labels = [r["label"] for r in rows]
    reported = json.loads((trained / "eval_results.json").read_text())
    assert reported["eval_matthews_correlation"] == pytest.approx(
        train_cola.matthews_correlation(predicted, labels), abs=1e-6
    )
    assert reported["eval_accuracy"] == pytest.approx(np.mean(np.array(predicted) == labels), abs=1e-6)


def test_card_records_the_run(trained):
    card = ModelCard.load(trained / "README.md")
    reported = json.loads((trained / "all_results.json").read_text())
    assert {r.metric_type: r.metric_value for r in card.data.eval_results} == {
        "matthews_correlation": reported["eval_matthews_correlation"],
        "accuracy": reported["eval_accuracy"],
    }
    # named after the output folder (the Trainer's convention), never the project's published checkpoint
    assert card.data.model_name == trained.name != PROJECT_COLA_CHECKPOINT.split("/")[-1]
    assert "- training sentences: 32" in card.text and "| optimisation steps | 4 |" in card.text
    assert "Zhu" in card.text and "Warstadt" in card.text


def test_gruen_loads_the_checkpoint_and_uses_its_class_1_logit(trained, workdir, tmp_path):
    """Shifting the acceptable-class bias by 1 must raise grammaticality by exactly 1/8 (GRUEN's scale)."""
    shifted = shutil.copytree(trained, tmp_path / "shifted", ignore=shutil.ignore_patterns("checkpoint-*"))
    weights = load_file(shifted / "model.safetensors")
    weights["classifier.bias"] = weights["classifier.bias"] + torch.tensor([0.0, 1.0])
    save_file(weights, shifted / "model.safetensors", metadata={"format": "pt"})
    gruen = evaluate.load(str(REPO / "metrics" / "gruen"))
    texts = ["The dog went home. He was happy to see his family.", "She ate at the store. Then she ran home."]
    common = {"predictions": texts, "lm_model": str(workdir / "base")}
    base = gruen.compute(cola_model=str(trained), **common)["grammaticality"]
    raised = gruen.compute(cola_model=str(shifted), **common)["grammaticality"]
    assert all(b > 0 for b in base)  # not clipped, so the shift shows in full
    assert raised == pytest.approx([b + 1 / 8 for b in base], abs=1e-5)


def test_matthews_correlation_is_pearson_of_the_binary_vectors():
    rng = np.random.default_rng(0)
    for _ in range(20):
        labels, predicted = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
        assert train_cola.matthews_correlation(predicted, labels) == pytest.approx(
            np.corrcoef(predicted, labels)[0, 1], abs=1e-12
        )
    assert train_cola.matthews_correlation([1, 1, 1], [0, 1, 0]) == 0.0  # constant prediction: defined as 0


def test_local_files_need_both_splits_and_cola_columns(tmp_path):
    write_cola(tmp_path / "train.jsonl", 4, seed=0)
    with pytest.raises(ValueError, match="both --train_file and --validation_file"):
        train_cola.load_cola(train_cola.ColaArguments(train_file=str(tmp_path / "train.jsonl")))
    (tmp_path / "validation.jsonl").write_text(json.dumps({"text": "A sentence.", "label": 1}) + "\n")
    arguments = train_cola.ColaArguments(
        train_file=str(tmp_path / "train.jsonl"), validation_file=str(tmp_path / "validation.jsonl")
    )
    with pytest.raises(ValueError, match=r"validation split lacks column\(s\) \['sentence'\]"):
        train_cola.load_cola(arguments)


def test_cola_raw_release_files_are_read_and_joined_and_bad_lines_named(tmp_path):
    (tmp_path / "in_domain_train.tsv").write_text("gj04\t1\t\tThe dog barked.\nr-67\t0\t*\tDog the barked.\n")
    (tmp_path / "in_dev.tsv").write_text("bc01\t1\t\tShe left.\n")
    (tmp_path / "out_dev.tsv").write_text("c-05\t0\t*\tLeft she the.\n\nc-05\t1\t\tWe sang.\n")
    arguments = train_cola.ColaArguments(
        train_file=str(tmp_path / "in_domain_train.tsv"),
        validation_file=f"{tmp_path / 'in_dev.tsv'},{tmp_path / 'out_dev.tsv'}",
    )
    cola = train_cola.load_cola(arguments)
    assert cola["train"]["sentence"] == ["The dog barked.", "Dog the barked."] and cola["train"]["label"] == [
        1,
        0,
    ]
    assert cola["validation"]["sentence"] == ["She left.", "Left she the.", "We sang."]
    assert cola["validation"]["label"] == [1, 0, 1]

    (tmp_path / "bad.tsv").write_text("gj04\t1\t\tFine.\ngj04\tyes\t\tNot a label.\n")
    with pytest.raises(ValueError, match=r"bad\.tsv, line 2: expected CoLA's 4 tab-separated columns"):
        train_cola.read_cola_tsv(str(tmp_path / "bad.tsv"))
    (tmp_path / "latin1.tsv").write_bytes(b"gj04\t1\t\tCaf\xe9.\n")
    with pytest.raises(ValueError, match=r"latin1\.tsv is not UTF-8"):
        train_cola.read_cola_tsv(str(tmp_path / "latin1.tsv"))
    (tmp_path / "mixed.jsonl").write_text("")
    with pytest.raises(ValueError, match="must share one of"):
        train_cola.load_cola(
            train_cola.ColaArguments(
                train_file=str(tmp_path / "in_dev.tsv"), validation_file=str(tmp_path / "mixed.jsonl")
            )
        )


def test_defaults_are_glue_cola_and_the_gruen_hub_id():
    arguments = train_cola.ColaArguments()
    assert (arguments.dataset_name, arguments.dataset_config, arguments.max_length) == (
        "nyu-mll/glue",
        "cola",
        128,
    )
    assert arguments.model_name_or_path == LM_CHECKPOINT  # GRUEN's bert-base-cased


def test_torchrun_on_two_cpu_processes_trains_one_ddp_run(workdir, tmp_path):
    """No extra flag: the two processes form one gloo group, share the epoch's rows (half the steps of
    one process at the same per-device batch) and process 0 alone writes the classifier and card."""
    output = tmp_path / "ddp"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env["OMP_NUM_THREADS"] = "1"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", port,
        str(REPO / "training" / "train_cola.py"),
        "--model_name_or_path", str(workdir / "base"), "--train_file", str(workdir / "train.jsonl"),
        "--validation_file", str(workdir / "validation.jsonl"), "--output_dir", str(output),
        "--max_length", str(MAX_LENGTH), "--num_train_epochs", "1", "--per_device_train_batch_size", "8",
        "--disable_tqdm", "true", "--save_strategy", "no",
    ]  # fmt: skip
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    state = json.loads((output / "trainer_state.json").read_text())
    assert state["global_step"] == 32 // 8 // 2  # 32 training sentences, 8 a process, 2 processes
    assert (output / "model.safetensors").is_file() and (output / "README.md").is_file()
    assert "parallel_mode != ParallelMode.DISTRIBUTED" not in run.stdout + run.stderr
