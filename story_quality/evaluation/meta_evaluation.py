"""How well do metrics agree with *your* raters: the library half of ``story-quality meta-evaluate``.

:func:`meta_evaluate_files` reads a ratings file and one or more metrics' score files
(:mod:`story_quality.evaluation.meta_reading`) and :func:`meta_evaluate` returns a
:class:`MetaEvaluation`: for each metric, each figure of :mod:`story_quality.evaluation.meta_figures`
(pooled, within-system, system-level, per-group, residual, pairwise accuracy) with its bootstrap
interval; the same figures for the baselines that need no model (length, distinct 3-grams, and
the oracles that score a story with its system's or its group's mean rating) and, where each
row lists its raters' ratings, for the raters themselves (each against the others' mean: the
ceiling); for each pair of metrics the difference of every figure with its paired interval,
its PERM-BOTH permutation p-value and, for pooled Pearson, Williams' test; with more than two
metrics, the groups the tests cannot tell apart (:mod:`story_quality.evaluation.meta_statistics`).

An item without a rating, or that a metric's file skipped, is left out of every figure (of
every metric, so that all are computed on the same items) and counted.
"""

from __future__ import annotations

import itertools
import math
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from story_quality.evaluation import correlation, meta_figures, significance
from story_quality.evaluation.comparison import PairResult
from story_quality.evaluation.meta_reading import MetricScores, Ratings, read_all_scores, read_ratings
from story_quality.evaluation.meta_results import MetaEvaluation, MetricResult, PairFigure
from story_quality.evaluation.meta_statistics import (
    Design,
    bootstrap,
    bootstrap_ceiling,
    interval_of,
    permutation_test,
    rank_groups,
    rater_ceiling,
)  # fmt: skip
from story_quality.score_file.rows import ScoreFileError

CEILING = "raters (leave one out)"


def _codes(values: list[Any] | None, keep: np.ndarray) -> np.ndarray | None:
    if values is None:
        return None
    kept = [values[i] for i in np.flatnonzero(keep)]
    return np.unique([repr(value) for value in kept], return_inverse=True)[1].astype(np.int64)


def _result(
    name: str, kind: str, point: np.ndarray, samples: np.ndarray, names: list[str], confidence: float
) -> MetricResult:
    figures = {
        figure: interval_of(float(point[k]), samples[:, k], confidence) for k, figure in enumerate(names)
    }
    return MetricResult(name, kind, figures)


def _baselines(ratings: Ratings, keep: np.ndarray, design: Design) -> list[tuple[str, np.ndarray]]:
    texts = [ratings.texts[i] for i in np.flatnonzero(keep)]
    found = [("length (words)", meta_figures.length_scores(texts)),
             ("distinct 3-grams", meta_figures.distinct_trigram_scores(texts))]  # fmt: skip
    if design.systems is not None:
        found.append(("system-mean oracle", meta_figures.mean_oracle(design.human, design.systems)))
    if design.groups is not None:
        found.append(("group-mean oracle", meta_figures.mean_oracle(design.human, design.groups)))
    return found


def _pair(a: np.ndarray, b: np.ndarray, samples: np.ndarray, design: Design, names: list[str],
          settings: tuple[int, int, float], step: Callable[[], object] | None) -> dict[str, PairFigure]:  # fmt: skip
    """Every figure's difference ``a - b`` with its paired interval (``samples``: the resamples'
    differences) and its permutation p-value; Williams' two-sided test for pooled Pearson."""
    resamples, seed, confidence = settings
    point = meta_figures.compute(a, design.human, design.systems, design.groups, names)
    point = point - meta_figures.compute(b, design.human, design.systems, design.groups, names)
    p_values = permutation_test(a, b, design, names, resamples, seed, step=step)
    figures = {
        name: PairFigure(interval_of(float(point[k]), samples[:, k], confidence), float(p_values[k]))
        for k, name in enumerate(names)
    }
    r_a, r_b, r_ab = (meta_figures.pearson(x, y) for x, y in ((a, design.human), (b, design.human), (a, b)))
    if len(a) > 3 and not any(math.isnan(r) for r in (r_a, r_b, r_ab)):
        try:
            figures["pooled.pearson"].p_williams = correlation.williams_test(
                r_a, r_b, r_ab, len(a), "two-sided"
            ).p_value
        except ValueError:
            pass  # degenerate correlations (two identical metrics): Williams' t is undefined
    return figures


def _rank(
    metrics: list[MetricResult],
    pairs: list[PairResult[dict[str, PairFigure]]],
    names: list[str],
    alpha: float,
) -> None:
    """Each metric's group per figure, when more than two metrics are compared."""
    if len(metrics) < 3:
        return
    position = {metric.name: i for i, metric in enumerate(metrics)}
    for name in names:
        p_values = np.full((len(metrics), len(metrics)), math.nan)
        for pair in pairs:
            i, j = position[pair.a], position[pair.b]
            p_values[i, j] = p_values[j, i] = pair.result[name].p_permutation
        groups = rank_groups([metric.figures[name].estimate for metric in metrics], p_values, alpha)
        for metric, group in zip(metrics, groups, strict=True):
            metric.rank[name] = group


def _kept(ratings: Ratings, metrics: Sequence[MetricScores]) -> tuple[np.ndarray, int]:
    """Items with a rating and every metric's score, and how many rated items a metric skipped."""
    rated = np.isfinite(ratings.human)
    scored = np.all([np.isfinite(metric.scores) for metric in metrics], axis=0)
    keep = rated & scored
    if keep.sum() < meta_figures.MIN_ITEMS:
        raise ScoreFileError(
            f"{ratings.path}: {int(keep.sum())} rows have a rating and every metric's score; at least "
            f"{meta_figures.MIN_ITEMS} are needed"
        )
    if np.ptp(ratings.human[keep]) == 0:
        rating = ratings.human[keep][0]
        raise ScoreFileError(
            f"{ratings.path}: every rating is {int(rating) if rating.is_integer() else rating} on the "
            f"{int(keep.sum())} rated and scored rows; agreement with ratings that never differ is undefined"
        )
    return keep, int(np.count_nonzero(rated & ~scored))


def _results(
    scored: list[tuple[str, np.ndarray]], design: Design, names: list[str], settings: tuple[int, int, float],
    metrics: Sequence[MetricScores], step: Callable[[], object] | None,
) -> tuple[list[MetricResult], np.ndarray]:  # fmt: skip
    """Each metric's and baseline's figures with their intervals, and the resamples' figures."""
    resamples, seed, confidence = settings
    arrays = [scores for _, scores in scored]
    samples = bootstrap(arrays, design, names, resamples, seed, step=step)
    results = []
    for k, (name, scores) in enumerate(scored):
        point = meta_figures.compute(scores, design.human, design.systems, design.groups, names)
        result = _result(
            name, "metric" if k < len(metrics) else "baseline", point, samples[:, k], names, confidence
        )
        result.epsilon = meta_figures.tie_epsilon(scores, design.human)
        if k < len(metrics):
            metric = metrics[k]
            result.source, result.signature, result.column = metric.source, metric.signature, metric.column
            result.skipped = metric.skipped
        results.append(result)
    return results, samples


def meta_evaluate(
    ratings: Ratings,
    metrics: Sequence[MetricScores],
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    progress: Callable[..., Any] | None = None,
) -> MetaEvaluation:
    """Every figure of every metric, baseline and the raters' ceiling, and every pair's tests.
    ``progress(total=N)``, when given, makes a progress bar (``tqdm``) updated once a resample."""
    keep, unscored = _kept(ratings, metrics)
    design = Design(ratings.human[keep], _codes(ratings.systems, keep), _codes(ratings.groups, keep))
    names = design.figures
    scored = [(metric.name, metric.scores[keep]) for metric in metrics] + _baselines(ratings, keep, design)
    arrays = [scores for _, scores in scored]
    combinations = list(itertools.combinations(range(len(metrics)), 2))
    bar = (
        None
        if progress is None
        else progress(total=resamples * (1 + (ratings.raters is not None) + len(combinations)))
    )
    step = None if bar is None else (lambda: bar.update(1))
    try:
        results, samples = _results(scored, design, names, (resamples, seed, confidence), metrics, step)
        ceiling = None
        if ratings.raters is not None:
            raters = ratings.raters[keep]
            ceiling = _result(CEILING, "ceiling", rater_ceiling(raters, design, names),
                              bootstrap_ceiling(raters, design, names, resamples, seed, step=step), names, confidence)  # fmt: skip
        pairs = [
            PairResult(metrics[i].name, metrics[j].name,
                       _pair(arrays[i], arrays[j], samples[:, i] - samples[:, j], design, names,
                             (resamples, seed, confidence), step))
            for i, j in combinations
        ]  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    _rank(results[: len(metrics)], pairs, names, 1 - confidence)
    return MetaEvaluation(
        ratings=str(ratings.path), rows=len(ratings.texts), missing=ratings.missing, unscored=unscored,
        n=int(keep.sum()), systems=None if design.systems is None else int(design.systems.max()) + 1,
        groups=None if design.groups is None else int(design.groups.max()) + 1,
        raters=None if ratings.raters is None else ratings.raters.shape[1],
        resamples=resamples, seed=seed, confidence=confidence, figures=names,
        metrics=results[: len(metrics)], baselines=results[len(metrics):], ceiling=ceiling, pairs=pairs,
        notes=_notes(design), human=design.human, scores=arrays[: len(metrics)],
        item_systems=None if ratings.systems is None else [str(ratings.systems[i]) for i in np.flatnonzero(keep)],
    )  # fmt: skip


def _notes(design: Design) -> list[str]:
    notes = []
    if design.systems is not None and design.systems.max() + 1 < meta_figures.MIN_ITEMS:
        notes.append(f"fewer than {meta_figures.MIN_ITEMS} systems: the system-level figures are not defined")
    for name, codes in (("system", design.systems), ("group", design.groups)):
        if codes is not None and np.bincount(codes).max() == 1:
            notes.append(
                f"every {name} holds one story: the {name}-mean oracle is the ratings themselves (1.000 "
                f"wherever defined), and no figure inside a {name} can be computed"
            )
    return notes


def meta_evaluate_files(
    ratings_path: str | pathlib.Path,
    score_paths: Sequence[str | pathlib.Path],
    rating_column: str = "human",
    text_column: str = "text",
    id_column: str | None = "id",
    system_column: str | None = "system",
    group_column: str | None = "group",
    score_column: str | None = None,
    resamples: int = significance.DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    required: Sequence[str] = (),
    progress: Callable[..., Any] | None = None,
) -> MetaEvaluation:
    """Read the ratings and the score files, and meta-evaluate (see :func:`meta_evaluate`).
    Raises :class:`~story_quality.score_file.ScoreFileError` naming the file and line for anything it
    cannot read or match, a ``ValueError`` naming the setting for a bad resamples, seed or confidence."""
    significance.check_command_settings(resamples, seed, confidence)
    if not score_paths:
        raise ScoreFileError("no score file: name one or more metrics' score files")
    ratings = read_ratings(pathlib.Path(ratings_path), rating_column, text_column, id_column, system_column,
                           group_column, required)  # fmt: skip
    metrics = read_all_scores([pathlib.Path(path) for path in score_paths], ratings, id_column, score_column)
    return meta_evaluate(ratings, metrics, resamples, seed, confidence, progress)
