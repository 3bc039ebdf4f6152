"""Reading a score file back: the one reader of ``score``'s summary, ``compare`` and ``meta-evaluate``.

:meth:`ScoreFile.read` reads a file's lines by the library's one strict reader and refuses a row
edited after ``score`` sealed it, a row without its seal in a file whose rows carry one, a first
row that records its input's size (``input_rows``) without its signature (the signature was
removed, and the rows would pass under another file's), an output still being written or with
fewer rows than its input, and, in a signed file, any of its metric's scores outside that metric's
range (the registry's ``score_ranges``); it keeps the file's one signature.
:meth:`ScoreFile.scored_rows` gives every row that holds a score (or says ``score`` skipped it),
keyed by its index or another id column (:func:`row_key`), each key once. Each error is a
:class:`~story_quality.score_file.rows.ScoreFileError` naming the file and line.
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from story_quality import input_files
from story_quality.registry import REGISTRY, score_ranges
from story_quality.score_file.claim import being_written
from story_quality.score_file.resume import read_sealed_rows
from story_quality.score_file.rows import IDENTITY_FIELDS, INPUT_ROWS, ROW_HASH, ScoreFileError, row_intact
from story_quality.signature import Signature, SignatureError

# What a score of each metric's columns can be: anything outside is not that metric's score.
SCORE_RANGES = score_ranges()
Rows = list[tuple[int, dict[str, Any]]]  # (line number, the row's fields; a null field is an absent one)


def row_key(where: str, value: Any, what: str) -> Any:
    """A row id, system or group name as a key: a string or a finite number (JSON true is not 1);
    ``where`` (``FILE:LINE``) and ``what`` (the column) name it in the error."""
    if isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ):
        return value
    shown = repr(value) if len(repr(value)) < 60 else repr(value)[:57] + "..."
    raise ScoreFileError(f"{where}: {what} is {shown}; it must be a string or a number")


@dataclass(frozen=True)
class ScoredRow:
    """One row that holds a score, or says ``score`` skipped it (``score`` None), with its key."""

    line: int
    key: Any
    group: Any  # the row's system (``scored_rows``' ``group_column``), None without one
    score: float | None
    fields: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ScoreFile:
    """One score file read back and checked: its rows, its one signature (None only for an unsigned
    file a reader accepts), and notes on what could not be told (an older file's completeness)."""

    path: pathlib.Path
    rows: Rows
    signature: str | None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: str | pathlib.Path, signed: bool = True, allow_unfinished: bool = False) -> ScoreFile:
        """The file at ``path``, checked; ``signed``: a file without a signature is refused;
        ``allow_unfinished``: an output still written or cut short is read (and noted)."""
        path = pathlib.Path(path)
        rows = json_rows(path)
        notes = (
            [f"{path}: read unfinished as asked (--allow-unfinished)"]
            if allow_unfinished
            else check_finished(path, rows)
        )
        signature = None
        if signed or any("signature" in record for _, record in rows):
            signature = file_signature(path, rows)
            _check_metric_ranges(path, rows, signature)
        return cls(path, rows, signature, notes)

    @classmethod
    def resumed(cls, path: pathlib.Path, expected: list[dict[str, Any]], source: pathlib.Path) -> ScoreFile:
        """An output ``score`` goes on writing: its rows sealed and each matching this run's input
        row (``expected``, their identities; ``source``, the input named in a refusal), a last line
        a kill cut short dropped (:func:`~story_quality.score_file.resume.read_sealed_rows`, which
        reads the bytes); the signature its first row carries (None for a file of no rows)."""
        records = read_sealed_rows(path, expected=expected, source=source)
        written = records[0].get("signature") if records else None
        return cls(path, list(enumerate(records, 1)), written if isinstance(written, str) else None)

    @property
    def records(self) -> list[dict[str, Any]]:
        """The rows' fields, in file order."""
        return [record for _, record in self.rows]

    def metric(self) -> str:
        """The metric the signature names (an error for a signature this package did not write)."""
        if self.signature is None:
            raise ScoreFileError(
                f"{self.path} carries no signature: name the score's field with --score-column"
            )
        return parsed_signature(self.path, self.signature).metric

    def score_column(self, requested: str | None, keys: Iterable[str | None] = ()) -> str:
        """The score's field: as ``requested`` (never a row's identity or one of ``keys``), else the
        metric the signature names, else the one numeric field of an unsigned file."""
        identity = {*IDENTITY_FIELDS, *(key for key in keys if key is not None)}
        if requested is not None:
            if requested in identity:
                raise ScoreFileError(
                    f"--score-column {requested}: that field says which row a score belongs to; it is not a score"
                )
            return requested
        if self.signature is not None:
            return self.metric()
        numeric = {key for _, record in self.rows for key, value in record.items()
                   if key not in identity and isinstance(value, int | float) and not isinstance(value, bool)}  # fmt: skip
        if len(numeric) != 1:
            found = (
                f"its numeric fields are {', '.join(sorted(numeric))}"
                if numeric
                else "it has no numeric field"
            )
            raise ScoreFileError(
                f"{self.path} carries no signature and {found}: name the score's field with --score-column"
            )
        return numeric.pop()

    def scored_rows(self, column: str, key_column: str, group_column: str | None = None) -> list[ScoredRow]:
        """Every row holding ``column`` (or ``skipped``), keyed by ``key_column`` and, with
        ``group_column``, grouped by it; a key twice (in one group) is refused. A row with neither
        key, score nor group is a summary row, left out."""
        found, seen = [], set()
        for number, record in self.rows:
            where = f"{self.path}:{number}"
            if key_column not in record:
                if column in record or (group_column is not None and group_column in record):
                    raise ScoreFileError(f"{where}: no {key_column!r} field (--id-column names the row id)")
                continue  # a summary row
            group = None
            if group_column is not None:
                if group_column not in record:
                    raise ScoreFileError(f"{where}: no {group_column!r} field (--system-column)")
                group = row_key(where, record[group_column], group_column)
            key = row_key(where, record[key_column], key_column)
            if (group, key) in seen:
                named = "" if group is None else f" for system {group!r}"
                raise ScoreFileError(f"{where}: {key_column} {key!r} appears twice{named}")
            seen.add((group, key))
            found.append(ScoredRow(number, key, group, row_score(self.path, number, record, column), record))
        return found


def json_rows(path: pathlib.Path) -> Rows:
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
    _signed_where_recorded(path, rows)
    return rows


def _every_row_sealed(path: pathlib.Path, rows: Rows) -> None:
    """In a file whose rows carry a seal, every row must: a row whose seal was deleted is refused."""
    sealed = [number for number, record in rows if ROW_HASH in record]
    unsealed = [number for number, record in rows if ROW_HASH not in record]
    if sealed and unsealed:
        raise ScoreFileError(
            f"{path}:{unsealed[0]}: this row carries no {ROW_HASH} while the file's other rows "
            f"do (line {sealed[0]}): it was added or edited by hand; compare refuses rows it cannot vouch for"
        )


def _signed_where_recorded(path: pathlib.Path, rows: Rows) -> None:
    """``score`` writes a file's signature and its input's size (``input_rows``) into the same first
    row: a row that records the size without the signature lost it (a merged file would then pass
    one file's rows under another's signature)."""
    for number, record in rows:
        if INPUT_ROWS in record and "signature" not in record:
            raise ScoreFileError(
                f"{path}:{number}: this row records its input's size ({INPUT_ROWS}) but no signature, which "
                "story-quality score writes beside it: the signature was removed, and these scores cannot be "
                "traced to a checkpoint and setting"
            )


def _check_metric_ranges(path: pathlib.Path, rows: Rows, signature: str) -> None:
    """In a file the signature says a registered metric wrote, every one of that metric's scores
    (each part too) must lie in its range, whichever column is compared."""
    parsed = Signature.parse_or_none(signature)
    entry = REGISTRY.get(parsed.metric) if parsed is not None else None
    if entry is None:
        return
    for number, record in rows:
        for column in entry.score_ranges:
            if column in record:
                row_score(path, number, record, column)


def check_finished(path: pathlib.Path, rows: Rows) -> list[str]:
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


def file_signature(path: pathlib.Path, rows: Rows) -> str:
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
