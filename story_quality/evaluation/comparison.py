"""Comparing systems' scores the way papers report them: the library half of ``story-quality compare``.

:func:`compare_files` reads outputs of ``story-quality score`` (one per system, or one file whose
rows name their system) and returns a :class:`Comparison`: for every system the number of scored
rows, the mean and its bootstrap confidence interval; for every pair of systems on the same rows
the mean difference, its interval, and the p-values of paired bootstrap resampling (Koehn, 2004;
its p-value tests the null shifted to 0, unlike sacrebleu's) and of approximate randomization
(Riezler and Maxwell, 2005) (:mod:`story_quality.evaluation.significance`). Rows are matched by
their ``index`` (or another id column), never by position.

It reads only what it can vouch for, and refuses with :class:`CompareError`, naming the file (and
line): files of different signatures (the human-scale table included when percentiles are
compared); systems of different rows when a paired test is asked for; a row edited after
``score`` sealed it, or a row without its seal in a file whose rows carry one; an output still
being written or with fewer rows than its input had (unless unfinished files are allowed); the
same file twice; a score outside the metric's range; a score column that is a row's identity; a
row id or system name that is not a string or a number. For a checkpoint that ships a human
scale table (:mod:`story_quality.union.human_scale`), its held-back human stories' intervals are
shown beside the systems'. The command, its picture and its flags are :mod:`story_quality.cli.compare`.
"""

from __future__ import annotations

import itertools
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from story_quality.checkpoints.reference import CheckpointReference
from story_quality.evaluation import significance
from story_quality.score_file.claim import same_file
from story_quality.score_file.reading import (
    check_finished,
    file_signature,
    json_rows,
    parsed_signature,
    row_score,
)
from story_quality.score_file.rows import IDENTITY_FIELDS, ScoreFileError
from story_quality.signature import Signature
from story_quality.union import human_scale

ID_COLUMN = "index"
HUMAN_DOMAINS = {"roc": "human ROC stories", "wp": "human WP stories"}


class CompareError(ValueError):
    """A bad file, row or option: the message names it (exit status 2)."""


@dataclass
class System:
    """One system's scores, keyed by row id, in the order its file gives them."""

    name: str
    source: str
    ids: list[Any]
    scores: np.ndarray
    skipped: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class SystemResult:
    name: str
    source: str
    n: int
    interval: significance.Interval
    scores: np.ndarray = field(repr=False)
    skipped: int = 0


@dataclass
class PairResult:
    a: str
    b: str
    test: significance.PairedTest


@dataclass
class Comparison:
    """What ``compare`` reports: per system, per pair, and the human stories of the checkpoint."""

    signature: str
    score_column: str
    resamples: int
    seed: int
    confidence: float
    systems: list[SystemResult]
    pairs: list[PairResult]
    human: list[SystemResult] = field(default_factory=list)
    human_table: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def system(result: SystemResult) -> dict[str, Any]:
            low, high = result.interval.low, result.interval.high
            return {"name": result.name, "source": result.source, "n": result.n, "skipped": result.skipped,
                    "mean": result.interval.estimate, "interval": [low, high]}  # fmt: skip

        def pair(result: PairResult) -> dict[str, Any]:
            difference = result.test.difference
            return {"a": result.a, "b": result.b, "n": result.test.n, "difference": difference.estimate,
                    "interval": [difference.low, difference.high],
                    "p_paired_bootstrap": result.test.p_paired_bootstrap,
                    "p_approximate_randomization": result.test.p_approximate_randomization}  # fmt: skip

        return {
            "signature": self.signature,
            "score_column": self.score_column,
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            "systems": [system(s) for s in self.systems],
            "pairs": [pair(p) for p in self.pairs],
            "human_scale": {"table": self.human_table, "domains": [system(h) for h in self.human]},
            "notes": self.notes,
        }

    def table(self) -> str:
        """The comparison as text for people."""
        level = f"{self.confidence:.0%}"
        lines = [
            f"signature: {self.signature}",
            f"{self.score_column}: mean and {level} bootstrap interval "
            f"({self.resamples} resamples, seed {self.seed})",
            "",
        ]
        width = max(len("system"), *(len(s.name) for s in [*self.systems, *self.human]))
        lines.append(f"{'system':<{width}}  {'n':>6}  {'mean':>7}  {level} interval")
        for result in [*self.systems, *self.human]:
            interval = result.interval
            lines.append(
                f"{result.name:<{width}}  {result.n:>6}  {interval.estimate:>7.4f}  "
                f"[{interval.low:.4f}, {interval.high:.4f}]"
            )
        if self.human_table:
            lines.append(
                f"(held back: the human stories of the checkpoint's table, sha256:{self.human_table[:12]})"
            )
        if self.pairs:
            lines += [
                "",
                f"paired, on the same rows: difference b - a, its {level} interval, p-values "
                f"(the smallest {self.resamples} resamples can give is {1 / (self.resamples + 1):.4f})",
            ]
            for pair in self.pairs:
                difference = pair.test.difference
                lines.append(
                    f"{pair.b} - {pair.a}: {difference.estimate:+.4f} [{difference.low:+.4f}, "
                    f"{difference.high:+.4f}], n {pair.test.n}; p = {pair.test.p_paired_bootstrap:.4f} "
                    f"(paired bootstrap), {pair.test.p_approximate_randomization:.4f} (approximate randomization)"
                )
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def _key(path: pathlib.Path, number: int, value: Any, what: str) -> Any:
    """A row id or system name as a key: a string or a finite number (JSON true is not 1)."""
    if isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ):
        return value
    shown = repr(value) if len(repr(value)) < 60 else repr(value)[:57] + "..."
    raise CompareError(f"{path}:{number}: {what} is {shown}; it must be a string or a number")


def read_systems(
    path: pathlib.Path,
    score_column: str | None,
    id_column: str,
    system_column: str | None,
    allow_unfinished: bool = False,
) -> tuple[str, str, list[System]]:
    """(signature, score column, systems) of one score file: one system, or one per ``system_column`` value."""
    rows = json_rows(path)
    notes = [f"{path}: read unfinished as asked (--allow-unfinished)"] if allow_unfinished else []
    notes += [] if allow_unfinished else check_finished(path, rows)
    signature = file_signature(path, rows)
    column = score_column or parsed_signature(path, signature).metric
    refused = {*IDENTITY_FIELDS, id_column, *([system_column] if system_column else [])}
    if column in refused:
        raise CompareError(
            f"--score-column {column}: that field says which row a score belongs to; it is not a score"
        )
    systems: dict[Any, System] = {}
    scores: dict[Any, list[float]] = {}
    seen: dict[Any, set[Any]] = {}
    for number, record in rows:
        if id_column not in record:
            if column in record or (system_column and system_column in record):
                raise CompareError(f"{path}:{number}: no {id_column!r} field (--id-column names the row id)")
            continue  # a summary row
        if system_column is not None and system_column not in record:
            raise CompareError(f"{path}:{number}: no {system_column!r} field (--system-column)")
        name = (
            path.name if system_column is None else _key(path, number, record[system_column], system_column)
        )
        system = systems.setdefault(name, System(str(name), str(path), [], np.empty(0)))
        row_id = _key(path, number, record[id_column], id_column)
        if row_id in seen.setdefault(name, set()):
            raise CompareError(f"{path}:{number}: {id_column} {row_id!r} appears twice for system {name!r}")
        seen[name].add(row_id)
        value = row_score(path, number, record, column)
        if value is None:
            system.skipped += 1
        else:
            system.ids.append(row_id)
            scores.setdefault(name, []).append(value)
    for name, system in systems.items():
        system.scores = np.asarray(scores.get(name, []), dtype=float)
        if not len(system.scores):
            raise CompareError(f"{path}: system {system.name!r} has no scored row")
    if not systems:
        raise CompareError(f"{path}: no scored rows")
    next(iter(systems.values())).notes.extend(notes)
    return signature, column, list(systems.values())


def _same_signature(first: tuple[pathlib.Path, str], other: tuple[pathlib.Path, str], column: str) -> None:
    """Two files' signatures must agree; a human-scale part may differ only when the raw scores are
    compared (it adds a column), never when the percentiles are (it is their scale)."""
    parsed = Signature.parse_or_none(first[1])
    raw = parsed is not None and column == parsed.metric

    def kept(signature: str) -> str:
        """The signature as the comparison must find it equal: without its human-scale part when the
        raw scores are compared; a signature another tool wrote is compared as it is."""
        parsed = Signature.parse_or_none(signature) if raw else None
        return str(parsed.without(*human_scale.HUMAN_SCALES)) if parsed is not None else signature

    if kept(first[1]) != kept(other[1]):
        raise CompareError(
            f"{first[0]} and {other[0]} were scored differently and cannot be compared:\n"
            f"  {first[0]}: {first[1]}\n  {other[0]}: {other[1]}\n"
            "Score every system with the same metric, checkpoint and settings."
        )


def load_systems(
    paths: Sequence[str | pathlib.Path],
    score_column: str | None = None,
    id_column: str = ID_COLUMN,
    system_column: str | None = None,
    allow_unfinished: bool = False,
) -> tuple[str, str, list[System]]:
    """(signature, score column, systems) of one or more score files, after checking their signatures agree."""
    if not paths:
        raise CompareError("no input: name the score files of two or more systems")
    _refuse_the_same_file_twice([pathlib.Path(path) for path in paths])
    try:
        read = [(pathlib.Path(path),
                 *read_systems(pathlib.Path(path), score_column, id_column, system_column, allow_unfinished))
                for path in paths]  # fmt: skip
    except ScoreFileError as error:
        raise CompareError(str(error)) from None
    columns = {column for _, _, column, _ in read}
    if len(columns) > 1:
        raise CompareError(
            f"the files name their scores differently ({', '.join(sorted(columns))}); pass --score-column"
        )
    for path, signature, column, _ in read[1:]:
        _same_signature((read[0][0], read[0][1]), (path, signature), column)
    systems = [system for *_, found in read for system in found]
    names = [system.name for system in systems]
    if len(set(names)) < len(names):
        if system_column is not None:
            raise CompareError(
                f"system {names[0]!r} appears in more than one input; give each system one name"
            )
        for system in systems:  # two files of the same name in different folders
            system.name = system.source
    return read[0][1], columns.pop(), systems


def _refuse_the_same_file_twice(paths: list[pathlib.Path]) -> None:
    """One file named twice (or through a link) is one system, not two that agree perfectly."""
    for first, second in itertools.combinations(paths, 2):
        if same_file(first, second):
            raise CompareError(f"{first} and {second} are the same file: name each system's scores once")


def aligned(a: System, b: System, id_column: str) -> np.ndarray:
    """``b``'s scores in ``a``'s row order, or an error when the two systems hold different rows."""
    in_a, in_b = set(a.ids), set(b.ids)
    only_a = [row for row in a.ids if row not in in_b]
    only_b = [row for row in b.ids if row not in in_a]
    if only_a or only_b:
        raise CompareError(
            f"{a.name!r} ({a.source}) and {b.name!r} ({b.source}) hold different rows: "
            f"{len(only_a)} {id_column}s only in the first (first: {only_a[:1]}), "
            f"{len(only_b)} only in the second (first: {only_b[:1]}). A paired test needs the same rows, "
            f"matched by {id_column!r}: score the same inputs (or name the row id with --id-column), "
            "or pass --no-paired for each system's interval alone."
        )
    position = {row: i for i, row in enumerate(b.ids)}
    return b.scores[[position[row] for row in a.ids]]


def human_rows(signature: str, column: str) -> tuple[list[tuple[str, np.ndarray]], str | None, list[str]]:
    """The held-back human stories' scores for the signature's checkpoint, if it ships a human scale
    table: (rows, the table's sha256, notes on why none is shown)."""
    parsed = Signature.parse_or_none(signature)
    if parsed is None or parsed.metric != "union" or column != "union":
        return [], None, []
    label = parsed["checkpoint"]
    if CheckpointReference.name_in_label(label) not in human_scale.TABLES:
        return (
            [],
            None,
            [f"no human scale table for {label}; tables exist for {', '.join(human_scale.TABLES)}"],
        )
    try:
        table = human_scale.human_scale_for(label)
    except human_scale.HumanScaleError as error:
        if "was made with" not in str(error):
            raise CompareError(str(error)) from None
        return [], None, [f"no human scale rows: {error}"]
    if human_scale.raw_reading(table.signature) != human_scale.raw_reading(parsed):
        return [], None, [f"no human scale rows: its stories were read as {table.signature}"]
    rows = [
        (f"{HUMAN_DOMAINS.get(name, name)} (held back)", scores) for name, scores in table.domains.items()
    ]
    return rows, table.sha256, []


def compare_systems(
    systems: Sequence[System],
    signature: str,
    score_column: str,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    paired: bool = True,
    id_column: str = ID_COLUMN,
) -> Comparison:
    """Each system's mean and interval, each pair's paired tests, and the checkpoint's human stories."""

    def summary(name: str, source: str, scores: np.ndarray, skipped: int = 0) -> SystemResult:
        interval = significance.bootstrap_interval(scores, resamples, seed, confidence)
        return SystemResult(name, source, len(scores), interval, scores, skipped)

    pairs = []
    if paired:
        for a, b in itertools.combinations(systems, 2):
            b_scores = aligned(a, b, id_column)
            if len(b_scores) < significance.MIN_PAIRED_ROWS:
                raise CompareError(
                    f"{a.name!r} and {b.name!r} share {len(b_scores)} scored row: a paired test needs at least "
                    f"{significance.MIN_PAIRED_ROWS}; pass --no-paired for each system's interval alone"
                )
            test = significance.compare_paired(a.scores, b_scores, resamples, seed, confidence)
            pairs.append(PairResult(a.name, b.name, test))
    rows, table, notes = human_rows(signature, score_column)
    notes = [note for s in systems for note in s.notes] + notes + pair_notes(pairs)
    notes += [
        f"{s.name}: {s.skipped} rows skipped by story-quality score are left out"
        for s in systems
        if s.skipped
    ]
    return Comparison(
        signature=signature,
        score_column=score_column,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        systems=[summary(s.name, s.source, s.scores, s.skipped) for s in systems],
        pairs=pairs,
        human=[summary(name, "human scale table", scores) for name, scores in rows],
        human_table=table,
        notes=notes,
    )


def pair_notes(pairs: Sequence[PairResult]) -> list[str]:
    """A word wherever a pair's numbers need one: few rows, or an interval and a p-value that disagree."""
    notes = []
    for pair in pairs:
        difference, level = pair.test.difference, pair.test.difference.confidence
        few = significance.few_rows_warning(pair.test.n)
        if few:
            notes.append(f"{pair.b} - {pair.a}: {few}")
        excludes_zero = difference.low > 0 or difference.high < 0
        if excludes_zero != (pair.test.p_paired_bootstrap < 1 - level):
            notes.append(
                f"{pair.b} - {pair.a}: the {level:.0%} interval {'excludes' if excludes_zero else 'contains'} 0 "
                f"but the paired bootstrap p = {pair.test.p_paired_bootstrap:.4f} is "
                f"{'not ' if excludes_zero else ''}below {1 - level:.2g}: the interval (percentiles of the "
                "resampled differences) and the test (the resamples shifted to the null) disagree at the edge "
                "of significance; call the difference unsettled"
            )
    return notes


def compare_files(
    paths: Sequence[str | pathlib.Path],
    score_column: str | None = None,
    id_column: str = ID_COLUMN,
    system_column: str | None = None,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    paired: bool = True,
    allow_unfinished: bool = False,
) -> Comparison:
    """Compare the systems of score files (outputs of ``story-quality score``).

    One file per system, or one file with ``system_column``; rows matched by ``id_column``.
    Raises :class:`CompareError` naming the file and row for anything it cannot compare.
    """
    check_settings(resamples, seed, confidence)
    signature, column, systems = load_systems(paths, score_column, id_column, system_column, allow_unfinished)
    return compare_systems(systems, signature, column, resamples, seed, confidence, paired, id_column)


def check_settings(resamples: int, seed: int, confidence: float) -> None:
    """``--resamples``, ``--seed`` and ``--confidence``, or a usage error naming the option."""
    try:
        significance.check_command_settings(resamples, seed, confidence)
    except ValueError as error:
        raise CompareError(str(error)) from None
