"""What ``story-quality meta-evaluate`` finds, :class:`MetaEvaluation` (computed by
:mod:`story_quality.evaluation.meta_evaluation`), and its plain JSON form for machines (every figure
with its interval and the number of resamples that gave it, the number of items, each score file's
signature). The table for people is :mod:`story_quality.cli.meta_report`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from story_quality.evaluation import significance
from story_quality.evaluation.comparison import PairResult
from story_quality.evaluation.meta_statistics import Estimate


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
    pairs: list[PairResult[dict[str, PairFigure]]]
    notes: list[str] = field(default_factory=list)
    # The items the figures are computed on, for a picture: ratings, each metric's scores, systems.
    human: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    scores: list[np.ndarray] = field(default_factory=list, repr=False)
    item_systems: list[str] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return evaluation_dict(self)


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


def _pair(pair: PairResult[dict[str, PairFigure]]) -> dict[str, Any]:
    figures = {}
    for name, figure in pair.result.items():
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
        **significance.settings_of(evaluation),
        "figures": evaluation.figures,
        "metrics": [_metric(result) for result in evaluation.metrics],
        "baselines": [_metric(result) for result in evaluation.baselines],
        "ceiling": None if evaluation.ceiling is None else _metric(evaluation.ceiling),
        "pairs": [_pair(pair) for pair in evaluation.pairs],
        "notes": evaluation.notes,
    }
