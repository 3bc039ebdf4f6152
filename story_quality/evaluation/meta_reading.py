"""Reading what ``story-quality meta-evaluate`` compares: a ratings file and metrics' score files.

The ratings file (JSONL, JSON or CSV, through :mod:`story_quality.input_files`, the readers of
``score``) holds a text a row and its rating: one number, or a list of numbers, one per rater
(the same raters, in the same order, on every row; ``null`` where a rater gave none). A row
without a rating (``null``, an empty CSV cell, or a list of nulls) is kept, counted, and left
out of every figure. Optional columns: an id, the system (generator) and the group (prompt): a
system or group given as 1 and as 1.0 is one, as 1 and as "1" is refused (one or two?), and
one column cannot be both. Ratings that are all equal are refused when the figures are computed.

A score file is an output of ``story-quality score`` on that ratings file, or any JSON lines
file with an id and a score: read by the one reader of score files,
:class:`~story_quality.score_file.ScoreFile` (rows edited after ``score`` sealed them,
unfinished outputs, scores out of their range and a row id twice are refused there). Its rows
are matched to the ratings by the id where the score file carries the ratings' id column, else
by the row ``index`` ``score`` wrote; every row's ``text_hash`` is checked against the rated
text (required when matched by index; checked, where a row carries one, when matched by id). Anything that does not match (a hash, an id or index the ratings do
not hold, a rated story no score row covers), and anything wrong in the ratings file, is refused
with :class:`~story_quality.score_file.ScoreFileError`, naming the file and line.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from story_quality import input_files
from story_quality.score_file.claim import same_file
from story_quality.score_file.reading import ScoredRow, ScoreFile, row_key
from story_quality.score_file.rows import TEXT_HASH, ScoreFileError, text_hash


@dataclass
class Ratings:
    """The ratings file's rows: text, mean rating (NaN where none), per-rater ratings when lists
    are given (rows x raters, NaN where a rater gave none), and the optional columns."""

    path: pathlib.Path
    lines: list[int]
    texts: list[str]
    human: np.ndarray
    raters: np.ndarray | None
    ids: list[Any] | None
    systems: list[Any] | None
    groups: list[Any] | None

    @property
    def missing(self) -> int:
        return int(np.count_nonzero(np.isnan(self.human)))

    @functools.cached_property
    def id_positions(self) -> dict[Any, int]:
        """Each id's row position (empty without ids)."""
        return {key: i for i, key in enumerate(self.ids or [])}


@dataclass
class MetricScores:
    """One score file's scores in the ratings' row order (NaN where ``score`` skipped the row)."""

    name: str
    source: str
    signature: str | None
    column: str
    scores: np.ndarray
    matched_by: str

    @property
    def skipped(self) -> int:
        return int(np.count_nonzero(np.isnan(self.scores)))


# A number as a CSV cell may write it: digits, one point, an exponent (no "_", "nan" or "inf").
DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)


def _number(value: Any, where: str, column: str) -> float:
    """A rating: a finite number (a numeric string in CSV), NaN for none; anything else refused."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    if isinstance(value, str):
        if not DECIMAL.fullmatch(value.strip()):  # float() would take "1_0" as 10, "nan", "١"
            raise ScoreFileError(f"{where}: {column} is {value[:40]!r}, not a number")
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScoreFileError(
            f"{where}: {column} is {json.dumps(value)[:40]}, not a number or a list of numbers"
        )
    if not math.isfinite(float(value)):
        raise ScoreFileError(f"{where}: {column} is {value}, not a finite number")
    return float(value)


def _rating(value: Any, where: str, column: str) -> list[float] | float:
    """A row's rating: one number (NaN for none) or a list, one per rater (a CSV cell may hold a JSON list)."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise ScoreFileError(f"{where}: {column} is not a valid JSON list ({error.msg})") from None
    if isinstance(value, list):
        if not value:
            raise ScoreFileError(f"{where}: {column} is an empty list; give one rating per rater")
        return [_number(item, where, column) for item in value]
    return _number(value, where, column)


def _column(
    rows: list[tuple[str, dict]], column: str | None, required: bool, path: pathlib.Path
) -> list[Any] | None:
    """An optional column's values: every row carries it, or none does (then None, unless required)."""
    if column is None:
        return None
    present = [column in row and row[column] is not None for _, row in rows]
    if not any(present):
        if required:
            raise ScoreFileError(f"{path}: no row has a {column!r} field (named by the option)")
        return None
    for (where, _), has in zip(rows, present, strict=True):
        if not has:
            raise ScoreFileError(f"{where}: no {column!r} field, while other rows have one")
    return [row_key(where, row[column], column) for where, row in rows]


def _names(rows: list[tuple[str, dict]], values: list[Any] | None, column: str | None) -> list[Any] | None:
    """A system or group column's names, one number written as 1 or 1.0 made one (the int); a name
    written once as a number and once as a string (1 and "1") is refused, not counted as two."""
    if values is None:
        return None
    names: list[Any] = []
    first: dict[str, tuple[Any, str]] = {}
    for (where, _), value in zip(rows, values, strict=True):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        names.append(value)
        seen = first.setdefault(str(value), (value, where))
        if isinstance(seen[0], str) != isinstance(value, str):
            kinds = ("string", "number") if isinstance(value, str) else ("number", "string")
            raise ScoreFileError(
                f"{where}: {column} {value!r} is a {kinds[0]} while {seen[1]} gives the {kinds[1]} "
                f"{seen[0]!r}: refused, not counted as one {column} or two; write each {column} one way"
            )
    return names


def _records(path: pathlib.Path) -> input_files.Records:
    if path.suffix.lower() not in input_files.RATING_SUFFIXES:
        raise ScoreFileError(
            f"{path}: a ratings file is {', '.join(input_files.RATING_SUFFIXES)} (a rating a row)"
        )
    try:
        return input_files.read_records(path)
    except FileNotFoundError:
        raise ScoreFileError(f"{path}: no such file") from None
    except (OSError, ValueError) as error:
        raise ScoreFileError(str(error)) from None


def _rater_matrix(
    ratings: list[list[float] | float], rows: list[tuple[str, dict]], column: str
) -> np.ndarray | None:
    """Per-rater ratings as rows x raters, when the rows give lists: the first rated row sets whether
    rows give one number or a list, and the first list its length; a row that differs is refused."""
    given = [(where, rating) for (where, _), rating in zip(rows, ratings, strict=True)
             if isinstance(rating, list) or not math.isnan(rating)]  # fmt: skip
    if not given or not isinstance(given[0][1], list):
        for where, rating in given:
            if isinstance(rating, list):
                raise ScoreFileError(f"{where}: {column} is a list while {given[0][0]} gives one number")
        return None
    first, width = given[0][0], len(given[0][1])
    for where, rating in given:
        if not isinstance(rating, list):
            raise ScoreFileError(f"{where}: {column} is one number while {first} gives a list per rater")
        if len(rating) != width:
            raise ScoreFileError(
                f"{where}: {column} lists {len(rating)} ratings while {first} lists {width}; give every row "
                "one rating per rater, null where a rater gave none"
            )
    return np.array([rating if isinstance(rating, list) else [math.nan] * width for rating in ratings])


def read_ratings(
    path: pathlib.Path,
    rating_column: str = "human",
    text_column: str = "text",
    id_column: str | None = "id",
    system_column: str | None = "system",
    group_column: str | None = "group",
    required: Sequence[str] = (),
) -> Ratings:
    """The ratings file's rows. ``required`` names the optional columns the user asked for by name
    (``"system"``, ``"group"``, ``"id"``): absent from every row, they are refused, not left out."""
    if system_column is not None and system_column == group_column:
        raise ScoreFileError(
            f"{path}: --system-column and --group-column both name {system_column!r}; a story's system "
            "(generator) and its group (prompt) are two columns"
        )
    records = _records(path)
    rows = [(f"{path}:{line}", row) for row, line in zip(records.rows, records.lines, strict=True)]
    if not rows:
        raise ScoreFileError(f"{path}: no rows")
    texts, ratings = [], []
    for where, row in rows:
        if None in row:
            raise ScoreFileError(f"{where}: more fields than the header names")
        if rating_column not in row:
            raise ScoreFileError(f"{where}: no {rating_column!r} field (--rating-column names the rating)")
        if not isinstance(row.get(text_column), str):
            problem = "no" if row.get(text_column) is None else "a non-text"
            raise ScoreFileError(f"{where}: {problem} {text_column!r} field (--text-column names the text)")
        texts.append(row[text_column])
        ratings.append(_rating(row[rating_column], where, rating_column))
    raters = _rater_matrix(ratings, rows, rating_column)
    if raters is None:
        human = np.array(ratings, dtype=float)
    else:
        counts = np.isfinite(raters).sum(axis=1)
        human = np.where(counts > 0, np.nansum(raters, axis=1) / np.maximum(counts, 1), math.nan)
    ids = _column(rows, id_column, "id" in required, path)
    if ids is not None:
        seen: dict[Any, str] = {}
        for (where, _), key in zip(rows, ids, strict=True):
            if key in seen:
                raise ScoreFileError(f"{where}: {id_column} {key!r} was already given at {seen[key]}")
            seen[key] = where
    return Ratings(
        path, records.lines, texts, human, raters, ids,
        _names(rows, _column(rows, system_column, "system" in required, path), system_column),
        _names(rows, _column(rows, group_column, "group" in required, path), group_column),
    )  # fmt: skip


def _position(ratings: Ratings, path: pathlib.Path, row: ScoredRow, by_id: str | None) -> int:
    """The ratings row a score row belongs to, or an error naming both."""
    where = f"{path}:{row.line}"
    found = row.fields.get(TEXT_HASH)
    if by_id is not None:
        if row.key not in ratings.id_positions:
            raise ScoreFileError(f"{where}: {by_id} {row.key!r} is not in the ratings file {ratings.path}")
        position = ratings.id_positions[row.key]
        if found is not None and found != text_hash(ratings.texts[position]):
            raise ScoreFileError(
                f"{where}: {by_id} {row.key!r} scored another text than line {ratings.lines[position]} of "
                f"{ratings.path} ({TEXT_HASH} {found!r}); the ids do not name the same stories in both files"
            )
        return position
    index = row.key
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(ratings.texts):
        raise ScoreFileError(
            f"{where}: index {index!r} is not a row of the ratings file {ratings.path} ({len(ratings.texts)} rows); "
            "score the ratings file itself, or give both files an id column"
        )
    if found != text_hash(ratings.texts[index]):
        problem = f"carries no {TEXT_HASH}" if found is None else "scored another text"
        raise ScoreFileError(
            f"{where}: row {index} {problem} than line {ratings.lines[index]} of {ratings.path} "
            f"({TEXT_HASH} {found!r}); the score file was not written by story-quality score on "
            "this ratings file (give both files an id column to match by id)"
        )
    return index


def read_scores(
    path: pathlib.Path, ratings: Ratings, id_column: str | None = "id", score_column: str | None = None
) -> MetricScores:
    """One score file's scores in the ratings' row order, every row matched or refused by name."""
    found = ScoreFile.read(path, signed=False)
    column = found.score_column(score_column, (id_column,))
    by_id = (
        id_column
        if ratings.ids is not None and any(id_column in record for _, record in found.rows)
        else None
    )
    scores = np.full(len(ratings.texts), math.nan)
    matched = set()
    for row in found.scored_rows(column, by_id or "index"):
        position = _position(ratings, path, row, by_id)
        matched.add(position)
        scores[position] = math.nan if row.score is None else row.score
    unmatched = [i for i in range(len(ratings.texts)) if i not in matched]
    if unmatched:
        raise ScoreFileError(
            f"{ratings.path}:{ratings.lines[unmatched[0]]}: no row of {path} scores this story "
            f"({len(unmatched)} rated rows unscored; matched by {by_id or 'index and text_hash'})"
        )
    return MetricScores(path.name, str(path), found.signature, column, scores, by_id or "index")


def read_all_scores(
    paths: Sequence[pathlib.Path], ratings: Ratings, id_column: str | None, score_column: str | None
) -> list[MetricScores]:
    """Every score file, none of them the ratings file or named twice; names made unique."""
    for i, path in enumerate(paths):
        if same_file(path, ratings.path):
            raise ScoreFileError(f"{path} is the ratings file; name the score files of the metrics")
        for other in paths[:i]:
            if same_file(path, other):
                raise ScoreFileError(f"{other} and {path} are the same file: name each metric's scores once")
    metrics = [read_scores(path, ratings, id_column, score_column) for path in paths]
    if len({metric.name for metric in metrics}) < len(metrics):
        for metric in metrics:
            metric.name = metric.source
    return metrics
