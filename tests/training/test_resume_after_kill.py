"""A training run killed after a saved checkpoint, then resumed, ends with the uninterrupted run's model.

The kill is real: ``SIGKILL`` to the whole ``accelerate launch`` process group as soon as a
checkpoint is complete on disk, as a crash or a pre-empted job would end it. Before the resume,
every weight of the base model is shifted in place: a run that started over (the resume ignored)
would start from other weights and end elsewhere, so only a real resume, from the checkpoint's
weights, optimizer, schedule and step, ends with the uninterrupted run's model.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest
import tiny_models
from conftest import REPO
from safetensors.torch import load_file, save_file
from test_train_cola import write_cola
from test_train_union import workdir, write_pairs  # noqa: F401 (workdir is a fixture)

STEPS = 120
SAVE_EVERY = 20


def launch_command(script: str, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "accelerate.commands.launch", "--quiet", "--cpu", "--num_processes", "1",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        "--num_cpu_threads_per_process", "1", str(REPO / "training" / script), *args,
    ]  # fmt: skip


def environment() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def run_to_the_end(script: str, *args: str) -> None:
    done = subprocess.run(
        launch_command(script, *args), env=environment(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def is_json(path: pathlib.Path) -> bool:
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def kill_after_first_checkpoint(script: str, output: pathlib.Path, *args: str) -> None:
    """Start the run; SIGKILL its process group once ``checkpoint-SAVE_EVERY`` is complete."""
    process = subprocess.Popen(
        launch_command(script, *args),
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    marker = output / f"checkpoint-{SAVE_EVERY}" / "trainer_state.json"  # the Trainer writes it last
    deadline = time.monotonic() + 300
    while not is_json(marker) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert marker.exists(), "the run ended before its first checkpoint"
    state = (
        json.loads((output / "trainer_state.json").read_text())
        if (output / "trainer_state.json").exists()
        else None
    )
    assert state is None or state["global_step"] < STEPS, "the run finished before it was killed"
    assert not (output / "model.safetensors").exists()


def shift_the_base_model(folder: pathlib.Path) -> None:
    """Add 0.05 to every floating-point weight of the model in ``folder`` (same path, config and tokenizer)."""
    weights = load_file(folder / "model.safetensors")
    shifted = {name: t + 0.05 if t.is_floating_point() else t for name, t in weights.items()}
    save_file(shifted, folder / "model.safetensors", metadata={"format": "pt"})


def assert_same_run(uninterrupted: pathlib.Path, resumed: pathlib.Path, result_keys: tuple[str, ...]) -> None:
    first, second = load_file(uninterrupted / "model.safetensors"), load_file(resumed / "model.safetensors")
    assert first.keys() == second.keys()
    for name in first:
        assert (first[name] - second[name]).abs().max().item() <= 1e-6, name
    measured = [json.loads((folder / "all_results.json").read_text()) for folder in (uninterrupted, resumed)]
    for key in result_keys:
        assert measured[0][key] == pytest.approx(measured[1][key], abs=1e-6), key
    card = [
        (folder / "README.md").read_text().split("## Results", 1)[-1] for folder in (uninterrupted, resumed)
    ]
    assert card[0] == card[1]


def test_train_union_killed_then_resumed_equals_the_uninterrupted_run(workdir, tmp_path):  # noqa: F811
    write_pairs(tmp_path / "pairs.jsonl", 40)
    shutil.copytree(workdir / "base", tmp_path / "base")  # shifted below: the module's base stays as it is

    def args(output: pathlib.Path, *extra: str) -> list[str]:
        return [
            "--model_name_or_path", str(tmp_path / "base"), "--dataset", str(tmp_path / "pairs.jsonl"),
            "--annotated_file", str(workdir / "annotated.txt"), "--output_dir", str(output),
            "--max_length", "48", "--validation_fraction", "0.2", "--max_steps", str(STEPS),
            "--per_device_train_batch_size", "4", "--save_strategy", "steps", "--save_steps", str(SAVE_EVERY),
            "--logging_steps", "10", "--dataloader_pin_memory", "false", "--disable_tqdm", "true",
            "--seed", "7", *extra,
        ]  # fmt: skip

    run_to_the_end("train_union.py", *args(tmp_path / "whole"))
    kill_after_first_checkpoint("train_union.py", tmp_path / "killed", *args(tmp_path / "killed"))
    shift_the_base_model(tmp_path / "base")
    run_to_the_end("train_union.py", *args(tmp_path / "killed", "--resume_from_checkpoint", "last"))
    assert_same_run(
        tmp_path / "whole",
        tmp_path / "killed",
        ("eval_accuracy", "annotated_pearson", "annotated_spearman", "annotated_kendall"),
    )


def test_train_cola_killed_then_resumed_equals_the_uninterrupted_run(tmp_path):
    tiny_models.save_masked_lm(tmp_path / "base", max_length=64, lowercase=False)
    write_cola(tmp_path / "train.jsonl", 64, seed=0)
    write_cola(tmp_path / "validation.jsonl", 16, seed=1)

    def args(output: pathlib.Path, *extra: str) -> list[str]:
        return [
            "--model_name_or_path", str(tmp_path / "base"), "--train_file", str(tmp_path / "train.jsonl"),
            "--validation_file", str(tmp_path / "validation.jsonl"), "--output_dir", str(output),
            "--max_length", "32", "--max_steps", str(STEPS), "--per_device_train_batch_size", "4",
            "--learning_rate", "1e-3", "--save_strategy", "steps", "--save_steps", str(SAVE_EVERY),
            "--eval_strategy", "no", "--dataloader_pin_memory", "false", "--disable_tqdm", "true",
            "--seed", "7", *extra,
        ]  # fmt: skip

    run_to_the_end("train_cola.py", *args(tmp_path / "whole"))
    kill_after_first_checkpoint("train_cola.py", tmp_path / "killed", *args(tmp_path / "killed"))
    shift_the_base_model(tmp_path / "base")
    run_to_the_end("train_cola.py", *args(tmp_path / "killed", "--resume_from_checkpoint", "last"))
    assert_same_run(tmp_path / "whole", tmp_path / "killed", ("eval_matthews_correlation", "eval_accuracy"))
