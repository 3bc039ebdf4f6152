"""The claim on a score file: never an input, one run at a time whatever path names it (story_quality.score_file.claim)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from story_quality import score_file


def write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_an_output_is_never_an_input_by_path_symbolic_link_or_hard_link(tmp_path):
    source = write(tmp_path / "in.txt", "story\n")
    (tmp_path / "sym.jsonl").symlink_to(source)
    os.link(source, tmp_path / "hard.jsonl")
    for output in (source, tmp_path / "." / "in.txt", tmp_path / "sym.jsonl", tmp_path / "hard.jsonl"):
        with pytest.raises(score_file.ScoreFileError, match="writing it would destroy the input"):
            score_file.refuse_inputs(output, [source])
    score_file.refuse_inputs(tmp_path / "new.jsonl", [source])


def test_a_claim_keeps_a_second_run_off_and_leaves_nothing_behind(tmp_path):
    output = tmp_path / "out.jsonl"
    with score_file.claim_output(output):
        assert (tmp_path / "out.jsonl.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(score_file.ScoreFileError, match=rf"being written by process {os.getpid()}"):
            with score_file.claim_output(output):
                pass
    assert list(tmp_path.iterdir()) == []  # the lock went, and so did the empty output it never wrote


def test_a_claim_in_another_process_is_seen_and_released_when_that_process_dies(tmp_path):
    output = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import pathlib, sys, time\nfrom story_quality import score_file\n"
         "with score_file.claim_output(pathlib.Path(sys.argv[1])):\n    print('held', flush=True)\n"
         "    time.sleep(60)", str(output)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(
            score_file.ScoreFileError, match=rf"process {holder.pid} \(it holds .*out\.jsonl\.lock\)"
        ):
            with score_file.claim_output(output):
                pass
    finally:
        holder.kill()
        holder.wait()
    with score_file.claim_output(output):  # killed: its lock file stays, its lock does not
        output.write_text(json.dumps({"index": 0}) + "\n")
    assert output.exists() and not (tmp_path / "out.jsonl.lock").exists()


def test_one_lock_per_file_whatever_path_names_it(tmp_path, monkeypatch):
    output = tmp_path / "out.jsonl"
    output.write_text("")
    (tmp_path / "link.jsonl").symlink_to(output)
    os.link(output, tmp_path / "hard.jsonl")
    monkeypatch.chdir(tmp_path)
    names = [tmp_path / "link.jsonl", pathlib.Path("out.jsonl"), tmp_path / "sub" / ".." / "out.jsonl"]
    (tmp_path / "sub").mkdir()
    with score_file.claim_output(output):
        assert score_file.being_written(output) == f"process {os.getpid()}"
        for name in [*names, tmp_path / "hard.jsonl"]:
            with pytest.raises(score_file.ScoreFileError, match="is being written by"):
                with score_file.claim_output(name):
                    pass
        assert score_file.being_written(tmp_path / "hard.jsonl") is not None
    with score_file.claim_output(tmp_path / "link.jsonl"):  # the lock lies beside the real file
        assert (tmp_path / "out.jsonl.lock").exists() and not (tmp_path / "link.jsonl.lock").exists()
        for name in (output, pathlib.Path("out.jsonl")):
            with pytest.raises(score_file.ScoreFileError, match=rf"being written by process {os.getpid()}"):
                with score_file.claim_output(name):
                    pass
    assert score_file.being_written(output) is None
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "hard.jsonl",
        "link.jsonl",
        "out.jsonl",
        "sub",
    ]


def test_a_pipe_or_device_is_refused_and_gets_no_lock(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for output in (fifo, pathlib.Path("/dev/null")):
        with pytest.raises(score_file.ScoreFileError, match="is not a regular file"):
            with score_file.claim_output(output):
                pass
    assert [path.name for path in tmp_path.iterdir()] == ["pipe"] and not pathlib.Path(
        "/dev/null.lock"
    ).exists()
