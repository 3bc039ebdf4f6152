"""``story-quality score`` on several processes: torchrun, accelerate and evaluate's own distributed
mode write the one-process file, and every process leaves the group it formed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from score_inputs import REPO, STORIES, compute_result, run_cli, union_args, union_checkpoint, write_input  # noqa: F401 (fixtures)

from story_quality import process_group
from story_quality.cli import score as score_command


def offline_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def test_two_torchrun_processes_each_score_rows_and_write_the_one_process_file(tmp_path, checkpoint):
    """The README's CPU launch starts two processes that both score rows; the file is the one-process file."""
    import torch

    source, one, two = write_input(tmp_path), tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # torchrun gives each process one thread; a thread count moves float sums
    try:
        assert run_cli(*union_args(source, one, checkpoint), "--chunk-size", "2") == 0
    finally:
        torch.set_num_threads(threads)
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
        "-m", "story_quality", "score", *union_args(source, two, checkpoint), "--chunk-size", "2",
    ]  # fmt: skip
    run = subprocess.run(command, env=offline_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    counts = re.search(r"this run: (\d+) \+ (\d+) rows on 2 processes", run.stderr)
    assert counts, run.stderr[-2000:]
    assert [int(c) for c in counts.groups()] == [
        4,
        3,
    ]  # chunks of 2: process 0 takes 0 and 2, process 1 takes 1 and 3
    assert two.read_bytes() == one.read_bytes()


@pytest.mark.parametrize("ends", ["scored", "refused"])
def test_a_run_closes_the_process_group_it_formed_however_it_ends(tmp_path, monkeypatch, ends):
    """A group left open at exit can abort a process that scored all its rows (a gloo thread at exit)."""
    import torch.distributed as dist

    def score_in_a_group(args):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
        if ends == "refused":
            raise score_command.UsageError("no rows")
        return {"rows": 0, "skipped": 0, "resumed_from": 0, "signature": "s", "counts": [0]}

    monkeypatch.setattr(score_command, "score", score_in_a_group)
    monkeypatch.setattr(score_command, "summarise", lambda args, summary: "summary")
    try:
        assert run_cli(*union_args(tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path)) == (
            0 if ends == "scored" else 2
        )
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


@pytest.mark.parametrize("barrier_fails", [False, True])
def test_every_process_meets_at_a_barrier_then_leaves_the_group_whatever_happens(monkeypatch, barrier_fails):
    """Issue 47: rank 1 aborted at teardown after a complete output; each rank waits for the others, then
    destroys its group, and a failing barrier neither skips the teardown nor changes the exit status."""
    import torch.distributed as dist

    calls = []

    def barrier(timeout):
        calls.append(("monitored_barrier", timeout.total_seconds()))
        if barrier_fails:
            raise RuntimeError("rank 1 did not arrive")

    monkeypatch.setattr(dist, "get_world_size", lambda: 2)
    monkeypatch.setattr(dist, "get_backend", lambda: "gloo")
    monkeypatch.setattr(dist, "monitored_barrier", barrier)
    monkeypatch.setattr(dist, "destroy_process_group", lambda: calls.append(("destroy",)))
    process_group.leave_process_group()
    assert calls == [("monitored_barrier", process_group.TEARDOWN_SECONDS), ("destroy",)]


def test_a_process_group_the_caller_opened_stays_open(tmp_path, monkeypatch):
    """Called from a program that runs its own group, the command leaves that group alone."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    monkeypatch.setattr(
        score_command,
        "score",
        lambda args: {"rows": 0, "skipped": 0, "resumed_from": 0, "signature": "s", "counts": [0]},
    )
    monkeypatch.setattr(score_command, "summarise", lambda args, summary: "summary")
    try:
        assert run_cli(*union_args(tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path)) == 0
        assert dist.is_initialized()
    finally:
        dist.destroy_process_group()


def test_accelerates_cpu_launch_of_several_processes_is_refused_with_the_launch_that_works(
    tmp_path, checkpoint, monkeypatch, capsys
):
    """`accelerate launch --cpu --num_processes 2` starts one process (it sets MASTER_ADDR and no ranks)."""
    monkeypatch.setenv("ACCELERATE_USE_CPU", "True")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    for name in ("LOCAL_RANK", "WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    output = tmp_path / "scores.jsonl"
    assert run_cli(*union_args(write_input(tmp_path), output, checkpoint)) == 2
    assert "torchrun --nproc_per_node N -m story_quality score" in capsys.readouterr().err
    assert not output.exists()


DISTRIBUTED = """
import json, sys
import evaluate
rank, checkpoint, stories, cache = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
metric = evaluate.load(sys.argv[5], checkpoint, num_process=2, process_id=rank, experiment_id="dist-test",
                       cache_dir=cache)
metric.add_batch(predictions=stories[rank::2])
result = metric.compute()
print(json.dumps(result if rank == 0 else None))
"""


def test_evaluates_own_distributed_mode_gathers_every_score_on_process_zero(tmp_path, checkpoint, expected):
    shares = [STORIES[0::2], STORIES[1::2]]
    ordered = shares[0] + shares[1]  # evaluate concatenates the processes' batches in rank order
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                DISTRIBUTED,
                str(rank),
                str(checkpoint),
                json.dumps(STORIES),
                str(tmp_path),
                str(REPO / "metrics" / "union"),
            ],
            env=offline_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for rank in (0, 1)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs[0][1][-2000:] + outputs[1][1][-2000:]
    result = json.loads(outputs[0][0].strip().splitlines()[-1])
    by_story = dict(zip(STORIES, expected["scores"], strict=True))
    assert result["scores"] == pytest.approx([by_story[s] for s in ordered], abs=1e-6)
    assert result["signature"] == expected["signature"]
