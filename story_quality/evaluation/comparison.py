"""Comparing systems' scores the way papers report them: the library half of ``story-quality compare``.

:func:`compare_files` reads outputs of ``story-quality score`` (one per system, or one file whose
rows name their system) and returns a :class:`Comparison`: for every system the number of scored
rows, the mean and its bootstrap confidence interval; for every pair of systems on the same rows
the mean difference, its interval, and the p-values of paired bootstrap resampling (Koehn, 2004;
its p-value tests the null shifted to 0, unlike sacrebleu's) and of approximate randomization
(Riezler and Maxwell, 2005) (:mod:`story_quality.evaluation.significance`). Rows are matched by
their ``index`` (or another id column), never by position.

Each file is read by the one reader of score files (:class:`~story_quality.score_file.ScoreFile`),
and what cannot be compared is refused with its :class:`~story_quality.score_file.ScoreFileError`,
naming the file (and line): files of different signatures (the human-scale table included when percentiles are
compared); systems of different rows when a paired test is asked for; a row edited after
``score`` sealed it, or a row without its seal in a file whose rows carry one; an output still
being written or with fewer rows than its input had (unless unfinished files are allowed); the
same file twice; a score outside the metric's range; a score column that is a row's identity; a
row id or system name that is not a string or a number. For a checkpoint whose metric's registry
entry finds held-back human stories (a human scale table), their intervals are shown beside the
systems'. The command, its table, its picture and its flags are :mod:`story_quality.cli.compare`.
"""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from story_quality.evaluation import significance
from story_quality.registry import REGISTRY, MetricEntry
from story_quality.score_file.claim import same_file
from story_quality.score_file.reading import ScoreFile
from story_quality.score_file.rows import ScoreFileError
from story_quality.signature import Signature

ID_COLUMN = "index"
Found = TypeVar("Found")


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
class PairResult(Generic[Found]):
    """Two systems (``compare``) or two metrics (``meta-evaluate``), by name, and what comparing
    them found: a paired test, or each figure's difference."""

    a: str
    b: str
    result: Found


@dataclass
class Comparison:
    """What ``compare`` reports: per system, per pair, and the human stories of the checkpoint."""

    signature: str
    score_column: str
    resamples: int
    seed: int
    confidence: float
    systems: list[SystemResult]
    pairs: list[PairResult[significance.PairedTest]]
    human: list[SystemResult] = field(default_factory=list)
    human_table: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def system(result: SystemResult) -> dict[str, Any]:
            low, high = result.interval.low, result.interval.high
            return {"name": result.name, "source": result.source, "n": result.n, "skipped": result.skipped,
                    "mean": result.interval.estimate, "interval": [low, high]}  # fmt: skip

        def pair(found: PairResult[significance.PairedTest]) -> dict[str, Any]:
            test = found.result
            difference = test.difference
            return {"a": found.a, "b": found.b, "n": test.n, "difference": difference.estimate,
                    "interval": [difference.low, difference.high],
                    "p_paired_bootstrap": test.p_paired_bootstrap,
                    "p_approximate_randomization": test.p_approximate_randomization}  # fmt: skip

        return {
            "signature": self.signature,
            "score_column": self.score_column,
            **significance.settings_of(self),
            "systems": [system(s) for s in self.systems],
            "pairs": [pair(p) for p in self.pairs],
            "human_scale": {"table": self.human_table, "domains": [system(h) for h in self.human]},
            "notes": self.notes,
        }


def read_systems(
    path: pathlib.Path,
    score_column: str | None,
    id_column: str,
    system_column: str | None,
    allow_unfinished: bool = False,
) -> tuple[str, str, list[System]]:
    """(signature, score column, systems) of one score file: one system, or one per ``system_column`` value."""
    found = ScoreFile.read(path, signed=True, allow_unfinished=allow_unfinished)
    column = found.score_column(score_column, (id_column, system_column))
    systems: dict[Any, System] = {}
    scores: dict[Any, list[float]] = {}
    for row in found.scored_rows(column, id_column, system_column):
        name = path.name if system_column is None else row.group
        system = systems.setdefault(name, System(str(name), str(path), [], np.empty(0)))
        if row.score is None:
            system.skipped += 1
        else:
            system.ids.append(row.key)
            scores.setdefault(name, []).append(row.score)
    for name, system in systems.items():
        system.scores = np.asarray(scores.get(name, []), dtype=float)
        if not len(system.scores):
            raise ScoreFileError(f"{path}: system {system.name!r} has no scored row")
    if not systems:
        raise ScoreFileError(f"{path}: no scored rows")
    next(iter(systems.values())).notes.extend(found.notes)
    return str(found.signature), column, list(systems.values())


def _entry(signature: str | Signature | None) -> MetricEntry | None:
    """The registry's entry of the metric a signature names (None for another tool's)."""
    parsed = Signature.parse_or_none(str(signature)) if signature is not None else None
    return None if parsed is None else REGISTRY.get(parsed.metric)


def _same_signature(first: tuple[pathlib.Path, str], other: tuple[pathlib.Path, str], column: str) -> None:
    """Two files' signatures must agree; a part that rescales the scores (a human scale) may differ
    only when the raw scores are compared (it adds a column), never when the rescaled ones are."""
    parsed = Signature.parse_or_none(first[1])
    raw = parsed is not None and column == parsed.metric

    def kept(signature: str) -> str:
        """The signature as the comparison must find it equal: either fp32 library read as fp32 (their
        scores agree within the signature's bound), without its rescaling parts when the raw scores
        are compared; a signature another tool wrote is compared as it is."""
        parsed = Signature.parse_or_none(signature)
        if parsed is None:
            return signature
        entry = _entry(parsed) if raw else None
        compared = parsed.as_compared()
        return str(compared.without(*entry.scale_parts) if entry else compared)

    if kept(first[1]) != kept(other[1]):
        raise ScoreFileError(
            f"{first[0]} and {other[0]} were scored differently and cannot be compared:\n"
            f"  {first[0]}: {first[1]}\n  {other[0]}: {other[1]}\n"
            "Score every system with the same metric, checkpoint and settings."
        )


def load_systems(paths: Sequence[str | pathlib.Path], score_column: str | None = None, id_column: str = ID_COLUMN,
                 system_column: str | None = None, allow_unfinished: bool = False) -> tuple[str, str, list[System]]:  # fmt: skip
    """(signature, score column, systems) of one or more score files, after checking their signatures agree."""
    if not paths:
        raise ScoreFileError("no input: name the score files of two or more systems")
    _refuse_the_same_file_twice([pathlib.Path(path) for path in paths])
    read = [(pathlib.Path(path),
             *read_systems(pathlib.Path(path), score_column, id_column, system_column, allow_unfinished))
            for path in paths]  # fmt: skip
    columns = {column for _, _, column, _ in read}
    if len(columns) > 1:
        raise ScoreFileError(
            f"the files name their scores differently ({', '.join(sorted(columns))}); pass --score-column"
        )
    for path, signature, column, _ in read[1:]:
        _same_signature((read[0][0], read[0][1]), (path, signature), column)
    systems = [system for *_, found in read for system in found]
    names = [system.name for system in systems]
    if len(set(names)) < len(names):
        if system_column is not None:
            raise ScoreFileError(
                f"system {names[0]!r} appears in more than one input; give each system one name"
            )
        for system in systems:  # two files of the same name in different folders
            system.name = system.source
    return read[0][1], columns.pop(), systems


def _refuse_the_same_file_twice(paths: list[pathlib.Path]) -> None:
    """One file named twice (or through a link) is one system, not two that agree perfectly."""
    for first, second in itertools.combinations(paths, 2):
        if same_file(first, second):
            raise ScoreFileError(f"{first} and {second} are the same file: name each system's scores once")


def aligned(a: System, b: System, id_column: str) -> np.ndarray:
    """``b``'s scores in ``a``'s row order, or an error when the two systems hold different rows."""
    in_a, in_b = set(a.ids), set(b.ids)
    only_a = [row for row in a.ids if row not in in_b]
    only_b = [row for row in b.ids if row not in in_a]
    if only_a or only_b:
        raise ScoreFileError(
            f"{a.name!r} ({a.source}) and {b.name!r} ({b.source}) hold different rows: "
            f"{len(only_a)} {id_column}s only in the first (first: {only_a[:1]}), "
            f"{len(only_b)} only in the second (first: {only_b[:1]}). A paired test needs the same rows, "
            f"matched by {id_column!r}: score the same inputs (or name the row id with --id-column), "
            "or pass --no-paired for each system's interval alone."
        )
    position = {row: i for i, row in enumerate(b.ids)}
    return b.scores[[position[row] for row in a.ids]]


def human_rows(signature: str, column: str) -> tuple[list[tuple[str, np.ndarray]], str | None, list[str]]:
    """The held-back human stories' scores for the signature's checkpoint, where its metric's registry
    entry finds them: (rows, the table's sha256, notes on why none is shown)."""
    parsed = Signature.parse_or_none(signature)
    entry = _entry(parsed)
    if parsed is None or entry is None or entry.held_back is None:
        return [], None, []
    try:
        return entry.held_back(parsed, column)
    except ValueError as error:  # a damaged table
        raise ScoreFileError(str(error)) from None


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
                raise ScoreFileError(
                    f"{a.name!r} and {b.name!r} share {len(b_scores)} scored row: a paired test needs at least "
                    f"{significance.MIN_PAIRED_ROWS}; pass --no-paired for each system's interval alone"
                )
            test = significance.compare_paired(
                a.scores, b_scores, resamples=resamples, seed=seed, confidence=confidence
            )
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


def pair_notes(pairs: Sequence[PairResult[significance.PairedTest]]) -> list[str]:
    """A word wherever a pair's numbers need one: few rows, or an interval and a p-value that disagree."""
    notes = []
    for pair in pairs:
        test = pair.result
        difference, level = test.difference, test.difference.confidence
        few = significance.few_rows_warning(test.n)
        if few:
            notes.append(f"{pair.b} - {pair.a}: {few}")
        excludes_zero = difference.low > 0 or difference.high < 0
        if excludes_zero != (test.p_paired_bootstrap < 1 - level):
            notes.append(
                f"{pair.b} - {pair.a}: the {level:.0%} interval {'excludes' if excludes_zero else 'contains'} 0 "
                f"but the paired bootstrap p = {test.p_paired_bootstrap:.4f} is "
                f"{'not ' if excludes_zero else ''}below {1 - level:.2g}: the interval (percentiles of the "
                "resampled differences) and the test (the resamples shifted to the null) disagree at the edge "
                "of significance; call the difference unsettled"
            )
    return notes


def compare_files(
    paths: Sequence[str | pathlib.Path],
    *,
    score_column: str | None = None,
    id_column: str = ID_COLUMN,
    system_column: str | None = None,
    paired: bool = True,
    allow_unfinished: bool = False,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = significance.DEFAULT_CONFIDENCE,
) -> Comparison:
    """Compare the systems of score files (outputs of ``story-quality score``).

    One file per system, or one file with ``system_column``; rows matched by ``id_column``.
    Raises :class:`~story_quality.score_file.ScoreFileError` naming the file and row for anything it
    cannot compare, a ``ValueError`` naming the setting for a bad resamples, seed or confidence.
    """
    significance.check_command_settings(resamples, seed, confidence)
    signature, column, systems = load_systems(paths, score_column, id_column, system_column, allow_unfinished)
    return compare_systems(systems, signature, column, resamples, seed, confidence, paired, id_column)
