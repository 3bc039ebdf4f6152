"""One call from scores to every figure: overall correlations, Williams tests, robustness views.

``evaluate_scores(annotations, {"my metric": scores})`` is what the lead (or any user) calls to put a
new metric next to the published ones; the CLI in ``__main__`` is a thin shell around it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from training.annotations import AnnotatedStories

from .published import load_published_metrics, oriented_name
from .robustness import (
    BIASED_REASONABLE_FRACTIONS,
    BIASED_SET_REPEATS,
    BIASED_SET_SIZE,
    biased_sets,
    error_type_sets,
)
from .statistics import METHODS, Correlation, Method, WilliamsResult, coefficient, correlate, williams_test


@dataclass(frozen=True)
class MetricResult:
    """One metric: scores oriented so that higher is better, and its correlation on all stories."""

    name: str
    scores: np.ndarray
    overall: Correlation
    published: bool = False
    paper: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class BiasedSetResult:
    """Mean and standard deviation over the draws of one biased set, per metric and method."""

    reasonable_fraction: float
    size: int
    repeats: int
    mean: dict[str, dict[Method, float]]
    std: dict[str, dict[Method, float]]


@dataclass(frozen=True)
class ErrorTypeResult:
    code: int
    name: str
    n: int
    n_with_error: int
    correlations: dict[str, Correlation]


@dataclass(frozen=True)
class CorrelationReport:
    human: np.ndarray
    metrics: list[MetricResult]
    reference: str
    # williams[(a, b)]: one-sided Williams test (Pearson) of "a correlates better than b".
    williams: dict[tuple[str, str], WilliamsResult]
    biased: list[BiasedSetResult]
    error_types: list[ErrorTypeResult]
    settings: dict[str, object] = field(default_factory=dict)

    @property
    def n_stories(self) -> int:
        return len(self.human)

    def metric(self, name: str) -> MetricResult:
        for result in self.metrics:
            if result.name == name:
                return result
        raise KeyError(f"no metric named {name!r}; have {[m.name for m in self.metrics]}")


def largest_feasible_size(
    is_reasonable: np.ndarray, fractions: Sequence[float], cap: int = BIASED_SET_SIZE
) -> int:
    """The largest set size <= ``cap`` that every biased fraction can be drawn at (0 if none)."""
    n_reasonable = int(np.sum(is_reasonable))
    n_unreasonable = len(is_reasonable) - n_reasonable
    for size in range(cap, 0, -1):
        if all(
            round(p * size) <= n_reasonable and size - round(p * size) <= n_unreasonable for p in fractions
        ):
            return size
    return 0


def _williams_matrix(metrics: list[MetricResult], human: np.ndarray) -> dict[tuple[str, str], WilliamsResult]:
    tests = {}
    for first in metrics:
        for second in metrics:
            if first is second:
                continue
            r12, r13 = first.overall.pearson, second.overall.pearson
            r23 = coefficient(first.scores, second.scores, "pearson")
            if any(math.isnan(value) for value in (r12, r13, r23)):
                continue
            tests[(first.name, second.name)] = williams_test(r12, r13, r23, len(human), "greater")
    return tests


def _biased_results(
    metrics: list[MetricResult],
    annotations: AnnotatedStories,
    fractions: Sequence[float],
    size: int,
    repeats: int,
    seed: int,
) -> list[BiasedSetResult]:
    human = annotations.human_scores
    results = []
    for biased in biased_sets(annotations.is_reasonable, fractions, size, repeats, seed):
        mean: dict[str, dict[Method, float]] = {}
        std: dict[str, dict[Method, float]] = {}
        for metric in metrics:
            values = {
                method: [coefficient(metric.scores[draw], human[draw], method) for draw in biased.draws]
                for method in METHODS
            }
            mean[metric.name] = {method: float(np.mean(v)) for method, v in values.items()}
            std[metric.name] = {method: float(np.std(v)) for method, v in values.items()}
        results.append(BiasedSetResult(biased.reasonable_fraction, biased.size, len(biased.draws), mean, std))
    return results


def _error_type_results(metrics: list[MetricResult], annotations: AnnotatedStories) -> list[ErrorTypeResult]:
    human = annotations.human_scores
    return [
        ErrorTypeResult(
            code=subset.code,
            name=subset.name,
            n=len(subset.indices),
            n_with_error=subset.n_with_error,
            correlations={
                m.name: correlate(m.scores[subset.indices], human[subset.indices]) for m in metrics
            },
        )
        for subset in error_type_sets(annotations)
        if len(subset.indices) >= 3
    ]


def evaluate_scores(
    annotations: AnnotatedStories,
    scores: Mapping[str, Sequence[float] | np.ndarray],
    *,
    lower_is_better: Collection[str] = (),
    published_dir: str | Path | None = None,
    reference: str | None = None,
    biased_fractions: Sequence[float] = BIASED_REASONABLE_FRACTIONS,
    biased_size: int | None = None,
    biased_repeats: int = BIASED_SET_REPEATS,
    seed: int = 0,
) -> CorrelationReport:
    """Correlate each metric's per-story ``scores`` with the human scores of ``annotations``.

    ``scores`` maps a metric name to one score per annotated story, in file order. Names listed in
    ``lower_is_better`` are negated and shown as ``-name``. ``published_dir`` adds UNION's released
    metric outputs after them. ``reference`` (default: the first given metric, else UNION) is the
    metric every other one is Williams-tested against in the summary table. ``biased_size``
    defaults to 200 stories, or the largest size every biased fraction allows on smaller data.
    """
    unknown = set(lower_is_better) - set(scores)
    if unknown:
        raise ValueError(f"lower_is_better names metrics that were not given: {sorted(unknown)}")
    human = annotations.human_scores
    metrics: list[MetricResult] = []
    for name, values in scores.items():
        oriented = np.asarray(values, dtype=np.float64)
        if oriented.shape != human.shape:
            raise ValueError(f"metric {name!r}: {oriented.size} scores for {len(human)} annotated stories")
        if not np.all(np.isfinite(oriented)):
            bad = int(np.flatnonzero(~np.isfinite(oriented))[0])
            raise ValueError(
                f"metric {name!r}: score {bad} (0-based) is not a finite number: {oriented[bad]}"
            )
        lower = name in lower_is_better
        oriented = -oriented if lower else oriented
        metrics.append(MetricResult(oriented_name(name, lower), oriented, correlate(oriented, human)))
    if published_dir is not None:
        for metric, values in load_published_metrics(published_dir, len(human)):
            oriented = -values if metric.lower_is_better else values
            label = oriented_name(metric.name, metric.lower_is_better)
            metrics.append(MetricResult(label, oriented, correlate(oriented, human), True, metric.paper))
    if not metrics:
        raise ValueError("no metric scores to evaluate")
    names = [m.name for m in metrics]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"two metrics share the table label(s) {duplicates}; rename one")
    if reference is None:
        reference = names[0] if scores else ("UNION" if "UNION" in names else names[0])
    elif reference not in names:
        raise ValueError(f"reference metric {reference!r} is not among {names}")

    size = (
        biased_size
        if biased_size is not None
        else largest_feasible_size(annotations.is_reasonable, biased_fractions)
    )
    biased = (
        _biased_results(metrics, annotations, biased_fractions, size, biased_repeats, seed)
        if size >= 3
        else []
    )
    errors = _error_type_results(metrics, annotations) if annotations.error_codes is not None else []
    return CorrelationReport(
        human=human,
        metrics=metrics,
        reference=reference,
        williams=_williams_matrix(metrics, human),
        biased=biased,
        error_types=errors,
        settings={"seed": seed, "biased_size": size, "biased_repeats": biased_repeats},
    )
