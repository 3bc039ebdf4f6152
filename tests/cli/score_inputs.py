"""What the tests of ``story-quality score`` share: the stories, a tiny UNION checkpoint, the
metric's own result for it, and the command line that scores a file with it."""

from __future__ import annotations

import json
import pathlib

import evaluate
import pytest
from tiny_models import SAMPLE_STORIES, roc_union_checkpoint

from story_quality import cli

REPO = pathlib.Path(__file__).resolve().parents[2]
STORIES = SAMPLE_STORIES


@pytest.fixture(scope="module", name="checkpoint")
def union_checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory)


@pytest.fixture(scope="module", name="expected")
def compute_result(checkpoint) -> dict:
    return evaluate.load(str(REPO / "metrics" / "union"), str(checkpoint)).compute(predictions=STORIES)


def write_input(folder: pathlib.Path) -> pathlib.Path:
    path = folder / "stories.txt"
    path.write_text("\n".join(STORIES) + "\n")
    return path


def read_output(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def union_args(source: pathlib.Path, output: pathlib.Path, checkpoint: pathlib.Path) -> list[str]:
    """The command line that scores ``source`` into ``output`` with the union checkpoint."""
    return [
        "--metric",
        "union",
        "--input",
        str(source),
        "--output",
        str(output),
        "--checkpoint",
        str(checkpoint),
    ]


def run_cli(*args: str) -> int:
    return cli.main(["score", *args])
