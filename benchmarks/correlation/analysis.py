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

from story_quality.evaluation.annotations import AnnotatedStories
from story_quality.evaluation.correlation import (
    METHODS,
    Correlation,
    Method,
    WilliamsResult,
    coefficient,
    correlate,
    williams_test,
)

from .published import load_published_metrics, oriented_name
from .robustness import (
    BIASED_SET_LEVELS,
    BIASED_SET_REPEATS,
    ERROR_TYPE_MIN_ANNOTATORS,
    ERROR_TYPE_SET_CODES,
    biased_sets,
    error_type_sets,
    reasonable_vote_counts,
)


@dataclass(frozen=True)
class MetricResult:
    """One metric: scores oriented so that higher is better, and its correlation on all stories."""

    name: str
    scores: np.ndarray
    overall: Correlation
    published: bool = False
    paper: tuple[float, float, float] | None = None
    # Pearson the paper printed on each error-type set (Table 7), by error code; empty if none.
    paper_error_types: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BiasedSetResult:
    """One biased set ``level`` (the paper's I): its draws' sizes and, per metric and method, the
    mean and standard deviation of the correlation over the usable draws."""

    level: int
    repeats: int
    # Draws with at least 3 stories and non-constant human scores; only these are correlated.
    usable: int
    sizes: tuple[int, ...]
    mean_human: float
    mean: dict[str, dict[Method, float]]
    std: dict[str, dict[Method, float]]

    @property
    def mean_size(self) -> float:
        return float(np.mean(self.sizes))


@dataclass(frozen=True)
class ErrorTypeResult:
    code: int
    name: str
    n: int
    n_reasonable: int
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


def _mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and (population) standard deviation of the finite values; NaN when there are none."""
    finite = [value for value in values if not math.isnan(value)]
    if not finite:
        return math.nan, math.nan
    return float(np.mean(finite)), float(np.std(finite))


def _biased_results(
    metrics: list[MetricResult],
    annotations: AnnotatedStories,
    levels: Sequence[int],
    repeats: int,
    seed: int,
) -> list[BiasedSetResult]:
    human = annotations.human_scores
    counts = reasonable_vote_counts(annotations.votes)
    results = []
    for biased in biased_sets(counts, levels, repeats, seed):
        # A draw too small to correlate, or with one human score only, is skipped for every metric
        # alike, so the metrics stay paired on the same draws.
        usable = [draw for draw in biased.draws if len(draw) >= 3 and np.ptp(human[draw]) > 0]
        mean: dict[str, dict[Method, float]] = {}
        std: dict[str, dict[Method, float]] = {}
        for metric in metrics:
            mean[metric.name], std[metric.name] = {}, {}
            for method in METHODS:
                values = [coefficient(metric.scores[draw], human[draw], method) for draw in usable]
                mean[metric.name][method], std[metric.name][method] = _mean_std(values)
        kept = [draw for draw in biased.draws if len(draw)]
        results.append(
            BiasedSetResult(
                level=biased.level,
                repeats=len(biased.draws),
                usable=len(usable),
                sizes=tuple(len(draw) for draw in biased.draws),
                mean_human=float(np.mean(np.concatenate([human[d] for d in kept]))) if kept else math.nan,
                mean=mean,
                std=std,
            )
        )
    return results


def _error_type_results(
    metrics: list[MetricResult], annotations: AnnotatedStories, codes: Sequence[int], min_annotators: int
) -> list[ErrorTypeResult]:
    human = annotations.human_scores
    results = []
    for subset in error_type_sets(annotations, codes, min_annotators):
        index = subset.indices
        usable = len(index) >= 3 and np.ptp(human[index]) > 0
        results.append(
            ErrorTypeResult(
                code=subset.code,
                name=subset.name,
                n=len(index),
                n_reasonable=subset.n_reasonable,
                n_with_error=subset.n_with_error,
                # An empty or one-score set has no correlation; it is still listed with its sizes.
                correlations={m.name: correlate(m.scores[index], human[index]) for m in metrics}
                if usable
                else {},
            )
        )
    return results


def _given_metrics(
    scores: Mapping[str, Sequence[float] | np.ndarray], human: np.ndarray, lower_is_better: Collection[str]
) -> list[MetricResult]:
    """Each given metric's scores, checked (one finite score per story) and oriented, with its correlations."""
    unknown = set(lower_is_better) - set(scores)
    if unknown:
        raise ValueError(f"lower_is_better names metrics that were not given: {sorted(unknown)}")
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
    return metrics


def _published_metrics(published_dir: str | Path, human: np.ndarray) -> list[MetricResult]:
    """UNION's released metric outputs, oriented, with their correlations and the paper's figures."""
    metrics = []
    for metric, values in load_published_metrics(published_dir, len(human)):
        oriented = -values if metric.lower_is_better else values
        label = oriented_name(metric.name, metric.lower_is_better)
        metrics.append(
            MetricResult(
                label,
                oriented,
                correlate(oriented, human),
                published=True,
                paper=metric.paper,
                paper_error_types=dict(metric.paper_error_types),
            )
        )
    return metrics


def evaluate_scores(
    annotations: AnnotatedStories,
    scores: Mapping[str, Sequence[float] | np.ndarray],
    *,
    lower_is_better: Collection[str] = (),
    published_dir: str | Path | None = None,
    reference: str | None = None,
    biased_levels: Sequence[int] = BIASED_SET_LEVELS,
    biased_repeats: int = BIASED_SET_REPEATS,
    seed: int = 0,
    error_type_codes: Sequence[int] = ERROR_TYPE_SET_CODES,
    error_type_min_annotators: int = ERROR_TYPE_MIN_ANNOTATORS,
) -> CorrelationReport:
    """Correlate each metric's per-story ``scores`` with the human scores of ``annotations``.

    ``scores`` maps a metric name to one score per annotated story, in file order. Names listed in
    ``lower_is_better`` are negated and shown as ``-name``. ``published_dir`` adds UNION's released
    metric outputs after them. ``reference`` (default: the first given metric, else UNION) is the
    metric every other one is Williams-tested against in the summary table. The biased test sets
    (``biased_levels``, ``biased_repeats`` seeded draws each) and, when ``annotations`` carry error
    codes, the error-type sets are built as ``robustness.py`` documents.
    """
    human = annotations.human_scores
    metrics = _given_metrics(scores, human, lower_is_better)
    if published_dir is not None:
        metrics += _published_metrics(published_dir, human)
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

    biased = _biased_results(metrics, annotations, biased_levels, biased_repeats, seed)
    errors = (
        _error_type_results(metrics, annotations, error_type_codes, error_type_min_annotators)
        if annotations.error_codes is not None
        else []
    )
    return CorrelationReport(
        human=human,
        metrics=metrics,
        reference=reference,
        williams=_williams_matrix(metrics, human),
        biased=biased,
        error_types=errors,
        settings={
            "seed": seed,
            "biased_levels": list(biased_levels),
            "biased_repeats": biased_repeats,
            "error_type_min_annotators": error_type_min_annotators,
        },
    )
