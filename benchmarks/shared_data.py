"""Where the benchmarks find the data that stays outside the project: one setting.

``STORY_QUALITY_DATA`` names the folder that holds ``union-roc/``, ``roc-stories/`` and
``cola/``; unset, it is ``../shared/data`` beside the repository.
"""

from __future__ import annotations

import argparse
import os
import pathlib

ENV_VAR = "STORY_QUALITY_DATA"
REPO = pathlib.Path(__file__).resolve().parents[1]


def shared_data_dir() -> pathlib.Path:
    """The data folder (``$STORY_QUALITY_DATA``, else ``../shared/data`` beside the repository)."""
    return pathlib.Path(os.environ.get(ENV_VAR) or REPO.parent / "shared" / "data")


# UNION's ROC test stories, one a line: the texts the speed benchmarks score.
ROC_REFERENCE_STORIES = shared_data_dir() / "union-roc" / "reference.txt"


def shared_data(*parts: str) -> pathlib.Path:
    """A path inside the data folder, with an error naming the setting when it is missing."""
    path = shared_data_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist; point {ENV_VAR} at the folder that holds {parts[0]}/."
        )
    return path


def add_union_roc_dir(parser: argparse.ArgumentParser) -> None:
    """``--data-dir``: the folder of UNION's ROC evaluation data (``ant_data.txt`` and beside it)."""
    parser.add_argument(
        "--data-dir",
        type=pathlib.Path,
        default=shared_data_dir() / "union-roc",
        help="UNION's ROC evaluation data (default: union-roc/ in the data folder)",
    )
