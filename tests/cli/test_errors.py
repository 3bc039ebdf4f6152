"""The one handler every command's refusals go through: one line on standard error, exit status 2."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import subprocess
import sys

import pytest

from story_quality import cli
from story_quality.cli import errors

REPO = pathlib.Path(__file__).resolve().parents[2]


def raising(error: BaseException):
    def main_fn() -> int:
        raise error

    return main_fn


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (errors.UsageError("--input a.csv:3: 3 fields"), "tool: error: --input a.csv:3: 3 fields"),
        (ValueError("bad value"), "tool: error: bad value"),
        (TypeError("not a str"), "tool: error: not a str"),
        (OSError(errno.ELOOP, "Too many levels of symbolic links", "loop.jsonl"),
         "tool: error: loop.jsonl: Too many levels of symbolic links"),
        (PermissionError(errno.EACCES, "Permission denied", "ro/out.jsonl"),
         "tool: error: ro/out.jsonl: Permission denied"),
        (OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b"), "tool: error: a -> b: Invalid cross-device link"),
    ],
)  # fmt: skip
def test_a_refusal_is_one_line_and_exit_status_2(capsys, error, line):
    assert errors.run_and_report("tool", raising(error)) == 2
    captured = capsys.readouterr()
    assert captured.err == line + "\n" and captured.out == ""


def test_the_status_of_the_work_is_returned_and_none_is_success(capsys):
    assert errors.run_and_report("tool", lambda: 0) == 0
    assert errors.run_and_report("tool", lambda: None) == 0
    assert errors.run_and_report("tool", lambda: 3) == 3
    assert capsys.readouterr().err == ""


def test_process_zero_error_is_printed_by_process_zero_only(capsys):
    assert errors.run_and_report("tool", raising(errors.ProcessZeroError("shared"))) == 2
    assert capsys.readouterr().err == ""


def test_a_closed_reader_and_ctrl_c_each_say_so_in_one_line(capsys):
    assert errors.run_and_report("tool", raising(BrokenPipeError(errno.EPIPE, "Broken pipe"))) == 141
    assert capsys.readouterr().err == (
        "tool: standard output was closed by its reader; the rest of what it prints was not written\n"
    )
    assert errors.run_and_report("tool", raising(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == "tool: interrupted\n"


def test_sigterm_stops_the_work_as_ctrl_c_does_and_the_handler_is_put_back(capsys):
    import signal

    before = signal.getsignal(signal.SIGTERM)
    cleaned = []

    def work() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()  # not reached: the handler raises first
            return 0
        finally:
            cleaned.append(True)

    assert errors.run_and_report("tool", work) == 143
    assert capsys.readouterr().err == "tool: terminated\n" and cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_bug_keeps_its_traceback(monkeypatch, capsys):
    with pytest.raises(RuntimeError, match="a bug"):
        errors.run_and_report("tool", raising(RuntimeError("a bug")))
    monkeypatch.setenv(errors.TRACEBACK_VARIABLE, "1")
    assert errors.run_and_report("tool", raising(ValueError("asked"))) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.endswith("tool: error: asked\n")


def test_every_command_reports_through_the_handler(tmp_path, capsys):
    assert cli.main(["compare", str(tmp_path / "missing.jsonl")]) == 2
    assert (
        capsys.readouterr().err
        == f"story-quality compare: error: {tmp_path / 'missing.jsonl'}: no such file\n"
    )
    assert (
        cli.main(["publish-metric", "union", "--repo-id", "no-slash", "--output", str(tmp_path / "s")]) == 2
    )
    assert capsys.readouterr().err.startswith(
        "story-quality publish-metric: error: --repo-id must be ORG/NAME"
    )
    assert cli.main(["score", "--metric", "union", "--input", str(tmp_path / "in.tsv"), "--output",
                     str(tmp_path / "o.jsonl")]) == 2  # fmt: skip
    assert capsys.readouterr().err.startswith("story-quality score: error: --input ")


def scores_file(path: pathlib.Path, n: int = 40) -> pathlib.Path:
    rows = [{"index": i, "line": i + 1, "union": (i % 7) / 7} for i in range(n)]
    rows[0]["signature"] = (
        "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
    )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_compare_into_a_closed_pipe_says_so_in_one_line_with_sigpipes_status(tmp_path):
    """``story-quality compare --json | head -1``: the reader is gone before anything is printed."""
    command = [sys.executable, "-m", "story_quality", "compare", str(scores_file(tmp_path / "a.jsonl")),
               str(scores_file(tmp_path / "b.jsonl")), "--json", "--resamples", "100"]  # fmt: skip
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    process.stdout.close()  # the reader closes before the comparison is printed
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141
    assert (
        err.decode()
        == "story-quality compare: standard output was closed by its reader; the rest of what it prints was not written\n"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("text,label\nThe dog ran home, and then it was happy.,1\nTom sat.,0\n",
         ":2: 3 fields, but the header names 2 ('text', 'label'); a comma inside a text needs the field in double "
         "quotes"),
        ('text,label\n"The dog ran home.,1\nTom sat.,0\n',
         ":2: field 1 opens a quote that is never closed (the rest of the file would be one text); a field holding "
         'a comma, a quote or a line break is written in double quotes, a quote inside it doubled: "He said ""hi"", '
         'then left."'),
    ],
)  # fmt: skip
def test_score_refuses_a_messy_csv_by_file_and_line_and_writes_nothing(tmp_path, capsys, content, problem):
    """Issue 67's messy files: a text cut at an unquoted comma, two stories merged by an unclosed quote."""
    source, output = tmp_path / "stories.csv", tmp_path / "scores.jsonl"
    source.write_text(content)
    assert cli.main(["score", "--metric", "union", "--input", str(source), "--output", str(output)]) == 2
    assert capsys.readouterr().err == f"story-quality score: error: {source}{problem}\n"
    assert not output.exists()
