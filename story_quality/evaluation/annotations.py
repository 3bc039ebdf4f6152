"""Human-annotation and score files: one home for every reader the project uses.

UNION released its judgements as ``ID ||| story ||| v1 v2 ... v7`` (one 0/1 vote per annotator,
1 = reasonable) and, for ROCStories, a twin file with each annotator's *error code* in place of
the vote (0 reasonable, 1 repeated plot, 2 poor coherence, 3 conflicting logic, 4 chaotic scene,
5 other). Metric scores are aligned with an annotation file by position, so those readers are
strict: a malformed line is an error naming its line number, never a silently skipped story that
would shift every later score onto the wrong story.

One line parser serves two needs: ``strict=True`` (annotations read for correlation) checks every
field; ``strict=False`` (stories kept out of training, whose votes nobody reads) needs only the
story field.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIELD_SEPARATOR = "|||"
ERROR_TYPES: dict[int, str] = {
    0: "reasonable",
    1: "repeated plot",
    2: "poor coherence",
    3: "conflicting logic",
    4: "chaotic scene",
    5: "other",
}


class AnnotationFormatError(ValueError):
    """A line of an annotation or score file that cannot be read; the message names the line."""


@dataclass(frozen=True)
class AnnotatedStories:
    """The stories, their 0/1 votes (stories x annotators) and optional error codes (same shape)."""

    ids: tuple[str, ...]
    stories: tuple[str, ...]
    votes: np.ndarray
    error_codes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def human_scores(self) -> np.ndarray:
        """Mean vote per story, in [0, 1]: the human score UNION's paper correlates with."""
        return self.votes.mean(axis=1)

    @property
    def is_reasonable(self) -> np.ndarray:
        """True where a strict majority of annotators voted "reasonable"."""
        return self.votes.sum(axis=1) * 2 > self.votes.shape[1]


def _content_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line; only blank lines at the very end are tolerated."""
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise AnnotationFormatError(f"{path}: the file is empty")
    return [(number, line) for number, line in enumerate(lines, start=1)]


def split_record(
    line: str, location: str, what: str = "votes", *, strict: bool = True
) -> tuple[str, str, str]:
    """``(ID, story, labels)`` of one ``ID ||| story ||| labels`` line, fields stripped.

    ``strict`` needs exactly three fields, none of them empty. Lenient (``strict=False``) needs
    only a non-empty story in the second field; the ID and labels are returned as found (empty
    when missing). ``location`` (``file:line``) starts every error message.

    >>> split_record("7 ||| Ken went home. ||| 1 0 1", "ant.txt:1")
    ('7', 'Ken went home.', '1 0 1')
    >>> split_record("7 ||| Ken went home.", "ant.txt:1", strict=False)
    ('7', 'Ken went home.', '')
    """
    fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
    if strict and len(fields) != 3:
        raise AnnotationFormatError(
            f"{location}: expected 'ID ||| story ||| {what}' (3 fields), found {len(fields)} field(s)"
        )
    if len(fields) < 2:
        raise AnnotationFormatError(f"{location}: expected 'ID ||| story ...', found no '{FIELD_SEPARATOR}'")
    story_id, story, labels = fields[0], fields[1], fields[2] if len(fields) > 2 else ""
    if strict and not story_id:
        raise AnnotationFormatError(f"{location}: the story ID is empty")
    if not story:
        raise AnnotationFormatError(f"{location}: the story text is empty")
    if strict and not labels:
        raise AnnotationFormatError(f"{location}: no {what} after the second '{FIELD_SEPARATOR}'")
    return story_id, story, labels


def _parse_record(
    path: Path, number: int, line: str, allowed: range, what: str
) -> tuple[str, str, list[int]]:
    story_id, story, labels = split_record(line, f"{path}:{number}", what)
    values = []
    for token in labels.split():
        if not token.isdigit() or int(token) not in allowed:
            raise AnnotationFormatError(
                f"{path}:{number}: {what} must be integers in {allowed.start}..{allowed.stop - 1}, found {token!r}"
            )
        values.append(int(token))
    return story_id, story, values


def _read_records(path: Path, allowed: range, what: str) -> tuple[list[str], list[str], np.ndarray]:
    ids: list[str] = []
    stories: list[str] = []
    rows: list[list[int]] = []
    seen: dict[str, int] = {}
    for number, line in _content_lines(path):
        story_id, story, values = _parse_record(path, number, line, allowed, what)
        if rows and len(values) != len(rows[0]):
            raise AnnotationFormatError(
                f"{path}:{number}: {len(values)} {what}, but line 1 has {len(rows[0])} (one per annotator)"
            )
        if story_id in seen:
            raise AnnotationFormatError(
                f"{path}:{number}: story ID {story_id!r} already used on line {seen[story_id]}"
            )
        seen[story_id] = number
        ids.append(story_id)
        stories.append(story)
        rows.append(values)
    return ids, stories, np.asarray(rows, dtype=np.int64)


def _check_error_codes(
    path: Path, codes_path: Path, ids: list[str], stories: list[str], votes: np.ndarray
) -> np.ndarray:
    """The error-code file's codes, after checking that it describes the same stories as the votes."""
    code_ids, code_stories, codes = _read_records(codes_path, range(0, len(ERROR_TYPES)), "error codes")
    if len(code_ids) != len(ids):
        raise AnnotationFormatError(f"{codes_path}: {len(code_ids)} stories, but {path} has {len(ids)}")
    if codes.shape != votes.shape:
        raise AnnotationFormatError(
            f"{codes_path}: {codes.shape[1]} error codes per story, but {path} has {votes.shape[1]} votes"
        )
    for row, (vote_id, code_id, story, code_story) in enumerate(
        zip(ids, code_ids, stories, code_stories, strict=True)
    ):
        if vote_id != code_id or story != code_story:
            raise AnnotationFormatError(
                f"{codes_path}:{row + 1}: story {code_id!r} does not match line {row + 1} of {path} ({vote_id!r})"
            )
        if not np.array_equal(codes[row] == 0, votes[row] == 1):
            raise AnnotationFormatError(
                f"{codes_path}:{row + 1}: error codes {codes[row].tolist()} disagree with the votes "
                f"{votes[row].tolist()} (code 0 must appear exactly where the vote is 1)"
            )
    return codes


def read_annotations(path: str | Path, error_types_path: str | Path | None = None) -> AnnotatedStories:
    """Read ``ID ||| story ||| votes`` and, optionally, the matching error-code file.

    The error-code file must describe the same stories in the same order, and each annotator's
    code must agree with their vote (code 0 exactly where the vote is 1); anything else means the
    two files do not belong together.
    """
    path = Path(path)
    ids, stories, votes = _read_records(path, range(0, 2), "votes")
    codes = None
    if error_types_path is not None:
        codes = _check_error_codes(path, Path(error_types_path), ids, stories, votes)
    return AnnotatedStories(tuple(ids), tuple(stories), votes, codes)


def read_held_out_stories(path: str | os.PathLike) -> list[str]:
    """Stories to keep out of training: UNION's ``ID ||| story ||| votes`` lines or one story per line.

    A line with ``|||`` is read leniently (only its story is needed); any other non-blank line is
    a story as it stands.
    """
    path = Path(path)
    stories = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FIELD_SEPARATOR in line:
            stories.append(split_record(line, f"{path}:{number}", strict=False)[1])
        elif line.strip():
            stories.append(line.strip())
    return stories


def _checked_scores(values: Sequence[object], source: str, expected: int | None, unit: str) -> np.ndarray:
    scores = []
    for position, value in enumerate(values, start=1):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AnnotationFormatError(
                f"{source}: {unit} {position}: expected a finite number, found {value!r}"
            )
        scores.append(float(value))
    if expected is not None and len(scores) != expected:
        raise AnnotationFormatError(
            f"{source}: {len(scores)} scores, but there are {expected} annotated stories"
        )
    return np.asarray(scores, dtype=np.float64)


def read_scores(path: str | Path, expected: int | None = None) -> np.ndarray:
    """One metric's scores: a text file with one number per line, or a ``.json`` list.

    A JSON object with a ``"scores"`` list (what most `evaluate` metrics return) is accepted too.
    ``expected`` is the number of annotated stories the scores must align with.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "scores" in data:
            data = data["scores"]
        if not isinstance(data, list):
            raise AnnotationFormatError(
                f"{path}: expected a JSON list of numbers or an object with a 'scores' list"
            )
        return _checked_scores(data, str(path), expected, "item")
    values: list[object] = []
    for number, line in _content_lines(path):
        text = line.strip()
        try:
            values.append(float(text))
        except ValueError:
            raise AnnotationFormatError(
                f"{path}:{number}: expected one number per line, found {text!r}"
            ) from None
    return _checked_scores(values, str(path), expected, "line")


def write_scores(path: str | os.PathLike, scores: Sequence[float]) -> None:
    """One score per line, in annotation order: the format :func:`read_scores` reads."""
    Path(path).write_text("\n".join(f"{s:.8f}" for s in scores) + "\n")
