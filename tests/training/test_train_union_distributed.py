"""train_union.py on two CPU processes through torchrun, as one machine and as two: what DDP promises.

Every process runs with ``tests/training/ddp_hook`` on its path, which records the rows of each
of its training steps and its final weights. Dropout is off and the reconstruction term too (its
mean over word pieces would differ between a rank's batch and the whole), so a two-process step
on 2 + 2 rows is the one-process step on the same 4 rows, up to float summation order.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import pytest
import tiny_models
import torch
from conftest import REPO
from safetensors.torch import load_file
from transformers import BertForMaskedLM, BertTokenizer

from story_quality.union.normalization import PLACEHOLDERS

SCRIPT = str(REPO / "training" / "train_union.py")
HOOK = pathlib.Path(__file__).with_name("ddp_hook")
PER_DEVICE_BATCH = 2
# Float summation order differs between one 4-row batch and two 2-row batches averaged by all-reduce.
WEIGHT_TOLERANCE = 1e-6
VOCABULARY = {
    piece: i for i, piece in enumerate(p for p in tiny_models.vocabulary(True) if p not in PLACEHOLDERS)
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> pathlib.Path:
    """A tiny BERT without dropout and 12 stories' pairs (about 20 training rows after the held-out split)."""
    root = tmp_path_factory.mktemp("union-ddp")
    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab=VOCABULARY, do_lower_case=True)
    config = tiny_models.bert_config(
        len(tokenizer), max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
    )
    BertForMaskedLM(config).save_pretrained(root / "base")
    tokenizer.save_pretrained(root / "base")
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from test_train_union import write_pairs

    write_pairs(root / "pairs.jsonl", 12)
    return root


def train_args(workdir: pathlib.Path, output: pathlib.Path, batch: int, *extra: str) -> list[str]:
    return [
        "--model_name_or_path", str(workdir / "base"), "--dataset", str(workdir / "pairs.jsonl"),
        "--output_dir", str(output), "--max_length", "48", "--validation_fraction", "0.2",
        "--num_train_epochs", "1", "--per_device_train_batch_size", str(batch), "--eval_strategy", "no",
        "--reconstruction_weight", "0", "--logging_steps", "1", "--disable_tqdm", "true", "--seed", "3",
        *extra,
    ]  # fmt: skip


def run(command: list[str], record: pathlib.Path) -> subprocess.Popen:
    """Start ``command`` with the recording hook, one thread a process, the tests' offline env."""
    record.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(HOOK), str(REPO), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path, DDP_RECORD=str(record), OMP_NUM_THREADS="1")
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen) -> None:
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output[-4000:]


def torchrun(*options: str) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", *options, SCRIPT]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def steps(record: pathlib.Path, rank: int = 0) -> list[list[str]]:
    return [json.loads(line) for line in (record / f"rows-{rank}.jsonl").read_text().splitlines()]


def max_difference(a: pathlib.Path, b: pathlib.Path) -> float:
    first, second = load_file(a), load_file(b)
    assert first.keys() == second.keys()
    return max((first[name] - second[name]).abs().max().item() for name in first)


@pytest.fixture(scope="module")
def two_processes(workdir) -> tuple[pathlib.Path, pathlib.Path]:
    """``torchrun --nproc_per_node 2`` (no extra flag), saving every 2 steps, and its record."""
    output, record = workdir / "ddp", workdir / "ddp-record"
    save = ("--save_strategy", "steps", "--save_steps", "2")
    command = torchrun("--nproc_per_node", "2", "--master_port", str(free_port()))
    finish(run([*command, *train_args(workdir, output, PER_DEVICE_BATCH, *save)], record))
    return output, record


@pytest.fixture(scope="module")
def one_process_doubled(workdir) -> pathlib.Path:
    record = workdir / "single-record"
    args = train_args(workdir, workdir / "single", 2 * PER_DEVICE_BATCH, "--save_strategy", "no")
    finish(run([sys.executable, SCRIPT, *args], record))
    return record


def test_two_cpu_processes_train_one_run_as_ddp_promises(two_processes, one_process_doubled):
    output, record = two_processes
    rank0, rank1, single = steps(record, 0), steps(record, 1), steps(one_process_doubled)
    rows = sum(len(step) for step in single)  # every training row, once
    assert len(rank0) == len(rank1) == len(single) == rows // (2 * PER_DEVICE_BATCH)
    # half the steps of one process at the same per-device batch, as the run's own state records
    state = json.loads((output / "trainer_state.json").read_text())
    assert state["global_step"] == len(rank0) == rows // PER_DEVICE_BATCH // 2
    for step, (mine, theirs, both) in enumerate(zip(rank0, rank1, single, strict=True)):
        assert not set(mine) & set(theirs), f"step {step}: both ranks trained on the same rows"
        assert sorted(mine + theirs) == sorted(both), f"step {step}: not the one-process step's rows"
    assert max_difference(record / "weights-0.safetensors", record / "weights-1.safetensors") == 0.0
    assert max_difference(record / "weights-0.safetensors", one_process_doubled / "weights-0.safetensors") < (
        WEIGHT_TOLERANCE
    )
    assert (output / "README.md").is_file() and (output / "model.safetensors").is_file()  # rank 0 wrote them


def test_a_checkpoint_written_by_two_processes_resumes_on_two(workdir, two_processes):
    output, record = two_processes
    resumed, resumed_record = workdir / "ddp-resumed", workdir / "ddp-resumed-record"
    shutil.copytree(output, resumed)
    saved = min(int(p.name.split("-")[1]) for p in output.glob("checkpoint-*"))  # not the last step's
    assert saved < len(steps(record))
    command = torchrun("--nproc_per_node", "2", "--master_port", str(free_port()))
    args = train_args(
        workdir, resumed, PER_DEVICE_BATCH, "--resume_from_checkpoint", str(resumed / f"checkpoint-{saved}")
    )
    finish(run([*command, *args], resumed_record))
    assert steps(resumed_record) == steps(record)[saved:]  # the same rows, only the steps after it
    final = max_difference(resumed_record / "weights-0.safetensors", record / "weights-0.safetensors")
    assert final < WEIGHT_TOLERANCE


def test_two_nodes_on_loopback_train_what_two_local_processes_train(workdir, two_processes):
    _, record = two_processes
    output, nodes_record = workdir / "nodes", workdir / "nodes-record"
    port = str(free_port())
    nodes = [
        run(
            [
                *torchrun(
                    "--nnodes",
                    "2",
                    "--nproc_per_node",
                    "1",
                    "--node_rank",
                    str(rank),
                    "--master_addr",
                    "127.0.0.1",
                    "--master_port",
                    port,
                ),
                *train_args(workdir, output, PER_DEVICE_BATCH, "--save_strategy", "no"),
            ],
            nodes_record,
        )  # fmt: skip
        for rank in (0, 1)
    ]
    for node in nodes:
        finish(node)
    assert steps(nodes_record, 0) == steps(record, 0) and steps(nodes_record, 1) == steps(record, 1)
    assert max_difference(nodes_record / "weights-1.safetensors", record / "weights-0.safetensors") < (
        WEIGHT_TOLERANCE
    )
