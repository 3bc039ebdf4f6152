"""Where a command's JSON report goes, the same for every command: ``--json [FILE|-]``.

``--json`` alone or ``--json -`` prints the report to standard output, in place of the table;
``--json FILE`` prints the table and writes the report to FILE. A file is checked before any
work (its folder exists, it is none of the inputs) and carries the command that wrote it
(under :data:`WRITTEN_BY`), so that a rerun replaces its own report and nothing else.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

from story_quality.score_file.claim import check_folder, refuse_inputs, same_file
from story_quality.score_file.rows import ScoreFileError

STDOUT = "-"
WRITTEN_BY = "written_by"


def add_json_flag(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json [FILE|-]``; ``what`` says what the report holds."""
    parser.add_argument(
        "--json",
        nargs="?",
        const=pathlib.Path(STDOUT),
        type=pathlib.Path,
        metavar="FILE|-",
        help=f"{what} as JSON, for machines: alone or with - printed (in place of the table), with FILE "
        "written to FILE (after the inputs, or it is read as FILE)",
    )


def to_stdout(target: pathlib.Path | None) -> bool:
    """Whether ``--json`` asks for the report on standard output."""
    return target is not None and str(target) == STDOUT


def check_json_path(
    target: pathlib.Path | None,
    inputs: Sequence[str | pathlib.Path],
    command: str,
    plot: pathlib.Path | None = None,
) -> None:
    """Before any work: the report's folder exists, it is no input nor the ``plot`` the command
    also draws, and only a report ``command`` wrote is replaced."""
    if target is None or to_stdout(target):
        return
    check_folder(target, "--json")
    refuse_inputs(target, [pathlib.Path(path) for path in inputs], "--json")
    if plot is not None and same_file(target, plot):
        raise ScoreFileError(f"--json and --plot name the same file {target}")
    if target.exists():
        try:
            written = json.loads(target.read_text(encoding="utf-8")).get(WRITTEN_BY) == command
        except (ValueError, AttributeError, UnicodeDecodeError):
            written = False
        if not written:
            raise ScoreFileError(f"--json {target} exists and was not written by {command}; it is left alone")


def write_json(report: dict[str, Any], target: pathlib.Path, command: str) -> None:
    """The report printed (``-``), or written to the file ``target`` with the command that wrote it."""
    if to_stdout(target):
        print(json.dumps(report, indent=2, allow_nan=False), flush=True)
        return
    text = json.dumps({WRITTEN_BY: command, **report}, indent=2, allow_nan=False)
    target.write_text(text + "\n", encoding="utf-8")
    print(f"report: {target}", file=sys.stderr)
