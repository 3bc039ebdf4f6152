"""Every output path a command cannot use is one line and exit 2: ``-``, a loop of links, a link to nothing, a read-only folder."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from story_quality import cli, score_file

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"


@pytest.fixture
def folder(tmp_path, monkeypatch) -> pathlib.Path:
    """A folder holding an input, two score files, a loop of links and links to nothing."""
    monkeypatch.chdir(tmp_path)
    pathlib.Path("in.txt").write_text("Ken ran home. He was happy.\nTom sat.\n")
    for name in ("a", "b"):
        rows = [
            {"index": i, "union": 0.1 * i} | ({"signature": SIGNATURE} if i == 0 else {}) for i in range(5)
        ]
        pathlib.Path(f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    os.symlink("loop2", "loop1")
    os.symlink("loop1", "loop2")
    os.symlink("nowhere/out", "dangling")
    os.symlink("gone.png", "dangling.png")
    os.symlink("loopb.png", "loopa.png")
    os.symlink("loopa.png", "loopb.png")
    return tmp_path


SCORE = ["score", "--metric", "union", "--input", "in.txt", "--output"]
COMPARE = ["compare", "a.jsonl", "b.jsonl", "--plot"]
PUBLISH = ["publish-metric", "union", "--repo-id", "me/space", "--output"]
CASES = [
    (SCORE, "loop1", "score: error: --output loop1 is a loop of symbolic links; name a file."),
    (
        SCORE,
        "dangling",
        "score: error: --output dangling is a symbolic link to nowhere/out, which does not exist; name the file itself.",
    ),
    (COMPARE, "loopa.png", "compare: error: --plot loopa.png is a loop of symbolic links; name a .png file."),
    (
        COMPARE,
        "dangling.png",
        "compare: error: --plot dangling.png is a symbolic link to gone.png, which does not exist; name the .png "
        "file itself.",
    ),
    (
        PUBLISH,
        "-",
        "publish-metric: error: --output -: this command writes a folder, never to standard output; name a folder.",
    ),
    (PUBLISH, "loop1", "publish-metric: error: --output loop1 is a loop of symbolic links; name a folder."),
    (
        PUBLISH,
        "dangling",
        "publish-metric: error: --output dangling is a symbolic link to nowhere/out, which does not exist; name the "
        "folder itself.",
    ),
]


@pytest.mark.parametrize(("command", "output", "line"), CASES, ids=[f"{c[0]}-{o}" for c, o, _ in CASES])
def test_an_output_path_a_command_cannot_use_is_one_line_and_exit_2(folder, capsys, command, output, line):
    before = sorted(path.name for path in folder.iterdir())
    assert cli.main([*command, output]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"story-quality {line}"
    assert (
        sorted(path.name for path in folder.iterdir()) == before
    )  # nothing written, not even a file named -


def test_a_read_only_folder_is_named(folder, capsys, monkeypatch):
    (folder / "ro").mkdir()
    real_access = os.access
    monkeypatch.setattr(
        score_file.claim.os, "access", lambda path, mode: real_access(path, mode) and "ro" not in str(path)
    )
    assert cli.main([*SCORE, "ro/out.jsonl"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"story-quality score: error: --output ro/out.jsonl: the folder {folder / 'ro'} is read-only; name a file "
        "in another folder."
    )


def test_a_loop_of_links_is_no_file_and_raises_nothing_when_compared(folder):
    assert score_file.same_file(pathlib.Path("loop1"), pathlib.Path("loop1"))
    assert not score_file.same_file(pathlib.Path("loop1"), pathlib.Path("a.jsonl"))
