"""What ``story-quality meta-evaluate`` reports, :class:`MetaEvaluation` (computed by
:mod:`story_quality.evaluation.meta_evaluation`), and the report written out: as a table for people
and as JSON for machines (every figure with its interval and the number of resamples that gave it,
the number of items, each score file's signature)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from story_quality.evaluation.meta_figures import FIGURE_LABELS
from story_quality.evaluation.meta_statistics import Estimate

CELL = 22


@dataclass
class MetricResult:
    """One metric's (or baseline's, or the raters') figures, by name, with their intervals."""

    name: str
    kind: str  # "metric", "baseline" or "ceiling"
    figures: dict[str, Estimate]
    epsilon: float = math.nan  # the tie calibration's epsilon, in the scores' units
    source: str | None = None
    signature: str | None = None
    column: str | None = None
    skipped: int = 0
    rank: dict[str, int] = field(default_factory=dict)  # each figure's group, with more than two metrics


@dataclass
class PairFigure:
    difference: Estimate
    p_permutation: float
    p_williams: float | None = None


@dataclass
class PairResult:
    a: str
    b: str
    figures: dict[str, PairFigure]


@dataclass
class MetaEvaluation:
    """What ``meta-evaluate`` reports (its figures: see :mod:`story_quality.evaluation.meta_evaluation`)."""

    ratings: str
    rows: int
    missing: int
    unscored: int
    n: int
    systems: int | None
    groups: int | None
    raters: int | None
    resamples: int
    seed: int
    confidence: float
    figures: list[str]
    metrics: list[MetricResult]
    baselines: list[MetricResult]
    ceiling: MetricResult | None
    pairs: list[PairResult]
    notes: list[str] = field(default_factory=list)
    # The items the figures are computed on, for a picture: ratings, each metric's scores, systems.
    human: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    scores: list[np.ndarray] = field(default_factory=list, repr=False)
    item_systems: list[str] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return evaluation_dict(self)

    def table(self) -> str:
        return evaluation_table(self)


def _number(value: float | None) -> float | None:
    """A figure for JSON: NaN (not defined on this data) becomes null."""
    return None if value is None or math.isnan(value) else value


def _estimate(estimate: Estimate) -> dict[str, Any]:
    return {"estimate": _number(estimate.estimate), "interval": [_number(estimate.low), _number(estimate.high)],
            "resamples_defined": estimate.defined}  # fmt: skip


def _metric(result: MetricResult) -> dict[str, Any]:
    found: dict[str, Any] = {"name": result.name, "kind": result.kind}
    if result.kind == "metric":
        found.update(source=result.source, signature=result.signature, score_column=result.column,
                     skipped=result.skipped)  # fmt: skip
    found["figures"] = {name: _estimate(estimate) for name, estimate in result.figures.items()}
    if result.kind != "ceiling":
        found["tie_epsilon"] = _number(result.epsilon)
    if result.rank:
        found["groups"] = result.rank
    return found


def _pair(pair: PairResult) -> dict[str, Any]:
    figures = {}
    for name, figure in pair.figures.items():
        figures[name] = {
            "difference": _estimate(figure.difference),
            "p_permutation": _number(figure.p_permutation),
        }
        if figure.p_williams is not None:
            figures[name]["p_williams"] = figure.p_williams
    return {"a": pair.a, "b": pair.b, "figures": figures}


def evaluation_dict(evaluation: MetaEvaluation) -> dict[str, Any]:
    """Every figure, interval and count as plain JSON values (NaN, a figure the data cannot give, as null)."""
    return {
        "ratings": evaluation.ratings,
        "rows": evaluation.rows,
        "missing_ratings": evaluation.missing,
        "unscored": evaluation.unscored,
        "n": evaluation.n,
        "systems": evaluation.systems,
        "groups": evaluation.groups,
        "raters": evaluation.raters,
        "resamples": evaluation.resamples,
        "seed": evaluation.seed,
        "confidence": evaluation.confidence,
        "figures": evaluation.figures,
        "metrics": [_metric(result) for result in evaluation.metrics],
        "baselines": [_metric(result) for result in evaluation.baselines],
        "ceiling": None if evaluation.ceiling is None else _metric(evaluation.ceiling),
        "pairs": [_pair(pair) for pair in evaluation.pairs],
        "notes": evaluation.notes,
    }


def _cell(estimate: Estimate, rank: int | None = None) -> str:
    if math.isnan(estimate.estimate):
        return "-"
    interval = "" if math.isnan(estimate.low) else f" [{estimate.low:.2f}, {estimate.high:.2f}]"
    return f"{estimate.estimate:.3f}{interval}" + ("" if rank is None else f" ({rank})")


def _grid(evaluation: MetaEvaluation, columns: list[MetricResult], heading: str) -> list[str]:
    label = max(len(FIGURE_LABELS[name]) for name in evaluation.figures)
    cells = {name: [_cell(result.figures[name], result.rank.get(name)) for result in columns]
             for name in evaluation.figures}  # fmt: skip
    width = max(
        len(text) for text in [*(r.name for r in columns), *(c for row in cells.values() for c in row)]
    )
    names = (f"{'':<{label}}  " + "  ".join(f"{result.name:<{width}}" for result in columns)).rstrip()
    lines = ["", heading, names]
    for name in evaluation.figures:
        lines.append(
            (f"{FIGURE_LABELS[name]:<{label}}  " + "  ".join(f"{c:<{width}}" for c in cells[name])).rstrip()
        )
    return lines


def _pairs(evaluation: MetaEvaluation) -> list[str]:
    lines = []
    label = max(len(FIGURE_LABELS[name]) for name in evaluation.figures)
    if evaluation.pairs:
        lines += [
            "",
            "between metrics: the interval resamples as above (other stories, prompts and systems); the "
            "permutation test\n(PERM-BOTH) keeps these stories and asks whether the two metrics are exchangeable "
            "on them, so the two\nmay disagree near the edge of significance",
        ]
    for pair in evaluation.pairs:
        lines += [
            "",
            f"{pair.a} - {pair.b}: difference, {evaluation.confidence:.0%} interval, p (paired permutation)",
        ]
        for name, figure in pair.figures.items():
            difference = figure.difference
            if math.isnan(difference.estimate):
                lines.append(f"{FIGURE_LABELS[name]:<{label}}  -")
                continue
            interval = (
                "" if math.isnan(difference.low) else f" [{difference.low:+.3f}, {difference.high:+.3f}]"
            )
            williams = "" if figure.p_williams is None else f", Williams p = {figure.p_williams:.4f}"
            lines.append(
                f"{FIGURE_LABELS[name]:<{label}}  {difference.estimate:+.3f}{interval}  p = {figure.p_permutation:.4f}{williams}"
            )
    return lines


def evaluation_table(evaluation: MetaEvaluation) -> str:
    """The meta-evaluation as text for people: metrics (and the raters' ceiling), baselines, pairs."""
    level = f"{evaluation.confidence:.0%}"
    over = " and ".join(
        what for what, present in (("systems", evaluation.systems), ("groups" if evaluation.groups else "items", True))
        if present
    )  # fmt: skip
    lines = [
        f"ratings: {evaluation.ratings}: {evaluation.rows} rows, {evaluation.missing} without a rating, "
        f"{evaluation.unscored} rated but unscored (both left out); {evaluation.n} items"
        + "".join(
            f", {count} {what}"
            for what, count in (
                ("systems", evaluation.systems),
                ("groups", evaluation.groups),
                ("raters", evaluation.raters),
            )
            if count
        ),  # fmt: skip
        f"each figure with its {level} bootstrap interval ({evaluation.resamples} resamples of {over}, "
        f"seed {evaluation.seed}); - where the data cannot give it",
    ]
    columns = [*evaluation.metrics, *([evaluation.ceiling] if evaluation.ceiling else [])]
    ranked = (
        " (n): the metric's group, metrics in one group not told apart" if evaluation.metrics[0].rank else ""
    )
    lines += _grid(
        evaluation, columns, "metrics" + (" and the raters' ceiling" if evaluation.ceiling else "") + ranked
    )
    lines += _grid(evaluation, evaluation.baselines, "baselines with no model (oracles: every story scored with its "
                   "system's or group's mean rating)")  # fmt: skip
    lines += _pairs(evaluation)
    lines.append("")
    for metric in evaluation.metrics:
        lines.append(
            f"{metric.name}: {metric.column} of {metric.source}, {metric.signature or 'no signature'}"
        )
    return "\n".join(lines + [f"note: {note}" for note in evaluation.notes])
