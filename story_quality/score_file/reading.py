"""Reading a score file back: every row checked as ``compare`` and ``meta-evaluate`` need it.

:func:`json_rows` reads the lines by the library's one strict reader and refuses a row edited
after ``score`` sealed it, or a row without its seal in a file whose rows carry one;
:func:`check_finished` refuses an output still being written or with fewer rows than its input;
:func:`file_signature` and :func:`parsed_signature` give the one signature a file carries;
:func:`row_score` a row's score, refused outside the metric's range. Each error is a
:class:`~story_quality.score_file.rows.ScoreFileError` naming the file and line.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any

from story_quality import input_files
from story_quality.registry import score_ranges
from story_quality.score_file.claim import being_written
from story_quality.score_file.rows import INPUT_ROWS, ROW_HASH, ScoreFileError, row_intact
from story_quality.signature import Signature, SignatureError

# What a score of each metric's columns can be: anything outside is not that metric's score.
SCORE_RANGES = score_ranges()


def json_rows(path: pathlib.Path) -> list[tuple[int, dict[str, Any]]]:
    """Every non-blank line of a JSON lines file as (line number, object), read by the library's one
    strict reader (:mod:`story_quality.input_files`: a key named twice is refused by line)."""
    try:
        records = input_files.read_json_records(path)
    except FileNotFoundError:
        raise ScoreFileError(f"{path}: no such file") from None
    except ValueError as error:
        raise ScoreFileError(f"{error}; not an output of story-quality score") from None
    except OSError as error:
        raise ScoreFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    rows = []
    for number, record in zip(records.lines, records.rows, strict=True):
        present = {key: value for key, value in record.items() if value is not None}
        if ROW_HASH in record and not (row_intact(record) or row_intact(present)):
            raise ScoreFileError(
                f"{path}:{number}: this row was changed after story-quality score wrote it (its "
                f"{ROW_HASH} does not match); compare refuses edited scores. A file a table tool "
                "rewrote is changed too (pandas' to_json rounds scores to 10 digits): compare each system's "
                "own score file instead (story-quality compare a.jsonl b.jsonl)"
            )
        rows.append((number, present))  # a null field is an absent one (pandas writes absent columns so)
    _every_row_sealed(path, rows)
    return rows


def _every_row_sealed(path: pathlib.Path, rows: list[tuple[int, dict[str, Any]]]) -> None:
    """In a file whose rows carry a seal, every row must: a row whose seal was deleted is refused."""
    sealed = [number for number, record in rows if ROW_HASH in record]
    unsealed = [number for number, record in rows if ROW_HASH not in record]
    if sealed and unsealed:
        raise ScoreFileError(
            f"{path}:{unsealed[0]}: this row carries no {ROW_HASH} while the file's other rows "
            f"do (line {sealed[0]}): it was added or edited by hand; compare refuses rows it cannot vouch for"
        )


def check_finished(path: pathlib.Path, rows: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """Refuse an output that story-quality score is still writing or that a run left unfinished
    (fewer rows than the input it records in its first row); notes on what cannot be told."""
    holder = being_written(path)
    if holder is not None:
        raise ScoreFileError(
            f"{path} is still being written by story-quality score ({holder}); wait for that run to finish "
            "(or pass --allow-unfinished to compare the rows written so far)"
        )
    if not rows or ROW_HASH not in rows[0][1]:
        return []
    expected = rows[0][1].get(INPUT_ROWS)
    written = sum(1 for _, record in rows if "index" in record)
    if not isinstance(expected, int) or isinstance(expected, bool):
        return [f"{path} does not record how many rows its input had (an older story-quality score): "
                "compare cannot tell whether it is complete"]  # fmt: skip
    if written < expected:
        raise ScoreFileError(
            f"{path} is unfinished: it holds {written} of the {expected} rows of its input (a run cut short); "
            "rerun the same story-quality score command to complete it, or pass --allow-unfinished"
        )
    return []


def file_signature(path: pathlib.Path, rows: list[tuple[int, dict[str, Any]]]) -> str:
    """The one signature a score file carries (first row, closing summary), or an error naming the file."""
    found = {(number, record["signature"]) for number, record in rows if "signature" in record}
    if not rows or not found:
        raise ScoreFileError(
            f"{path} carries no signature (story-quality score writes it into the first row): "
            "compare refuses scores it cannot trace to a checkpoint and setting"
        )
    for number, signature in sorted(found):
        if not isinstance(signature, str):
            raise ScoreFileError(
                f"{path}:{number}: signature is {signature!r}, not a signature story-quality score wrote"
            )
    signatures = {signature for _, signature in found}
    if len(signatures) > 1:
        raise ScoreFileError(f"{path} holds rows of several signatures: {', '.join(sorted(signatures))}")
    return signatures.pop()


def parsed_signature(path: pathlib.Path, signature: str) -> Signature:
    """A file's signature parsed, or an error naming the file."""
    try:
        return Signature.parse(signature)
    except SignatureError as error:
        raise ScoreFileError(f"{path}: {error}; not an output of story-quality score") from None


def row_score(path: pathlib.Path, number: int, record: dict[str, Any], column: str) -> float | None:
    """The row's score, None for a row ``score`` skipped; an error naming the line for anything else."""
    if column not in record:
        if "skipped" in record:
            return None
        raise ScoreFileError(f"{path}:{number}: no {column!r} field (--score-column names the score)")
    value = record[column]
    try:
        number_value = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    except OverflowError:
        number_value = math.inf
    if number_value is None or not math.isfinite(number_value):
        shown = (
            repr(value) if len(repr(value)) < 40 else f"{repr(value)[:30]}... ({len(repr(value))} characters)"
        )
        raise ScoreFileError(f"{path}:{number}: {column} is {shown}, not a finite number")
    low, high = SCORE_RANGES.get(column, (-math.inf, math.inf))
    if not low <= number_value <= high:
        raise ScoreFileError(
            f"{path}:{number}: {column} is {number_value!r}, outside the range of a {column} score "
            f"[{low:g}, {high:g}]; it is not a score story-quality score wrote"
        )
    return number_value
