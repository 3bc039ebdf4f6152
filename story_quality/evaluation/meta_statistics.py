"""How sure is a meta-evaluation figure, and does one metric agree with the raters better than another?

The statistics of ``story-quality meta-evaluate`` over the figures of
:mod:`story_quality.evaluation.meta_figures`, each drawn from its own seeded
``numpy.random.Generator`` (a result depends only on the data, the number of resamples and the
seed), on the primitives of :mod:`story_quality.evaluation.significance` (its interval ends,
its settings' checks, its p-value ``(1 + count) / (1 + resamples)``):

- :func:`resample_indices`: the bootstrap resamples. Without systems, items are drawn with
  replacement (or whole groups, when the items have groups: stories of one prompt are not
  independent). With systems, systems and inputs (groups, else items) are drawn independently
  and an item enters once for every draw of its system times every draw of its input, as
  ``nlpstats`` resamples "both" (Deutsch, Dror and Roth, 2021): the interval then covers what
  another draw of generators and of prompts would give.
- :func:`bootstrap`: every figure of several metrics on the same resamples, so that the
  difference of two metrics' figures has a paired interval (:func:`interval_of`).
- :func:`permutation_test`: PERM-BOTH (Deutsch et al., 2021; ``mt-metrics-eval``'s test between
  two metrics): both metrics standardised (mean 0, deviation 1), each item's two scores swapped
  with probability 1/2, the figures recomputed; the p-value is the share of trials whose
  absolute difference is at least the observed one (two-sided; a tie counts). Where the items
  have systems or groups, a metric's error is seldom independent from story to story (a metric
  that over-rewards one generator's style errs alike on all its stories), and swapping story by
  story then rejects a true null far too often (``benchmarks.meta_evaluate_simulations``, its
  rates in ``benchmarks/log/2026-11-29-meta-evaluate.md``). So each metric is split into its
  systems' part, its groups' part (the additive fit) and what is left, and the parts are swapped
  by system, by group and by story: the swaps the errors' structure allows.
- :func:`rank_groups`: with more than two metrics, the groups that cannot be told apart, as
  ``mt-metrics-eval`` clusters them: metrics in order of the figure, best first; a metric
  opens a new group when it is significantly worse than the first metric of the current group.
- :func:`rater_ceiling`: each rater against the mean of the others (on the items both rated),
  every figure averaged over the raters: how well one person agrees with the others. A metric is
  compared with the mean of all raters, which is less noisy than one rater, so it may pass this
  ceiling: the level of one more rater, not a bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from story_quality.evaluation import meta_figures, significance, trial_pool


@dataclass(frozen=True)
class Design:
    """The rated items' ratings and, where given, each item's system and group as codes 0..k-1."""

    human: np.ndarray
    systems: np.ndarray | None = None
    groups: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("systems", "groups"):
            codes = getattr(self, name)
            if codes is not None and len(codes) != len(self.human):
                raise ValueError(f"{name}: {len(codes)} codes for {len(self.human)} ratings")

    @property
    def figures(self) -> list[str]:
        return meta_figures.available_figures(self.systems is not None, self.groups is not None)

    def subset(self, index: np.ndarray) -> Design:
        return Design(
            self.human[index],
            None if self.systems is None else self.systems[index],
            None if self.groups is None else self.groups[index],
        )


def _cluster_draws(codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """How many times each code is drawn when as many codes as there are are drawn with replacement."""
    present = np.unique(codes)
    drawn = present[rng.integers(0, len(present), size=len(present))]
    return np.bincount(drawn, minlength=int(codes.max()) + 1)


def resample_indices(design: Design, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The item positions of each bootstrap resample (with repeats), as the module describes."""
    rng = np.random.default_rng(seed)
    n = len(design.human)
    inputs = design.groups if design.groups is not None else np.arange(n)
    for _ in range(resamples):
        weight = _cluster_draws(inputs, rng)[inputs]
        if design.systems is not None:
            weight = weight * _cluster_draws(design.systems, rng)[design.systems]
        yield np.repeat(np.arange(n), weight)


# Memory one worker gives the metrics' sorted pairs (each pair: two positions, its size, two flags).
SORTED_PAIRS_BYTES = 512 * 2**20
PAIR_BYTES = 26


class _Resampled:
    """The figures of each metric on bootstrap resamples (called with a chunk of resamples' item
    positions). The pairwise accuracies count each metric's pairs sorted once a chunk
    (:func:`meta_figures.sorted_pairs`), weighted by each resample's copies of the items: the
    figures :func:`meta_figures.compute` gives on the resample, without a sort of its pairs.
    Every metric's sorted pairs are kept at once where they fit in ``SORTED_PAIRS_BYTES`` (a
    resample's data then serves every metric while it is in the cache), else a few at a time."""

    def __init__(self, metrics: Sequence[np.ndarray], humans: Sequence[np.ndarray], design: Design,
                 names: Sequence[str]) -> None:  # fmt: skip
        self.metrics, self.humans, self.design, self.names = list(metrics), list(humans), design, list(names)
        self.paired = [k for k, name in enumerate(names) if name in meta_figures.PAIRWISE]
        self.rest = [k for k, name in enumerate(names) if name not in meta_figures.PAIRWISE]

    def __call__(self, indices: Sequence[np.ndarray]) -> np.ndarray:
        metrics, humans, names = self.metrics, self.humans, self.names
        found = np.full((len(indices), len(metrics), len(names)), math.nan)
        rest_names = [names[k] for k in self.rest]
        rated = {id(human): meta_figures.Rated(human) for human in humans}
        n = len(self.design.human)
        at_once = max(1, int(SORTED_PAIRS_BYTES // (PAIR_BYTES * n * (n - 1) // 2 + 1)))
        for first in range(0, len(metrics), at_once):  # the metrics whose sorted pairs fit at once
            group = range(first, min(first + at_once, len(metrics)))
            pairs = {k: meta_figures.sorted_pairs(metrics[k], rated[id(humans[k])]) for k in group}
            for trial, index in enumerate(indices):
                part = self.design.subset(index)
                copies = np.bincount(index, minlength=n)
                drawn = {id(h): meta_figures.Rated(h[index], part.systems, part.groups) for h in humans}
                for k in group:
                    found[trial, k, self.rest] = meta_figures.compute_rated(
                        metrics[k][index], drawn[id(humans[k])], rest_names, items=index
                    )
                    if self.paired:
                        accuracies = meta_figures.resampled_accuracies(pairs[k], copies)
                        found[trial, k, self.paired] = [
                            accuracies[meta_figures.PAIRWISE[names[j]]] for j in self.paired
                        ]
        return found


def bootstrap(
    metrics: Sequence[np.ndarray],
    design: Design,
    names: Sequence[str],
    resamples: int,
    seed: int,
    *,
    humans: Sequence[np.ndarray] | None = None,
    step: Callable[[], object] | None = None,
    processes: int | None = None,
) -> np.ndarray:
    """The named figures of each metric on each resample: an array (resamples, metrics, figures).
    ``humans`` gives each metric its own ratings (a rater's ceiling); by default the design's.
    ``step`` is called once a resample; ``processes`` (by default :func:`trial_pool.run_trials`'
    choice) changes the wall time only."""
    significance.check_seed(seed)
    humans = [design.human] * len(metrics) if humans is None else humans
    indices = list(resample_indices(design, resamples, seed))
    work = _Resampled(metrics, humans, design, names)
    return trial_pool.run_trials(work, indices, len(design.human), processes, step)


@dataclass(frozen=True)
class Estimate:
    """A figure, its bootstrap interval (NaN when too few resamples give the figure) and the
    number of resamples that gave it."""

    estimate: float
    low: float
    high: float
    confidence: float
    defined: int


def interval_of(estimate: float, samples: np.ndarray, confidence: float) -> Estimate:
    """The percentile interval of ``samples`` (NaN resamples left out), as significance takes it;
    NaN when fewer than half the resamples, or fewer than the level needs, give the figure."""
    finite = samples[np.isfinite(samples)]
    if math.isnan(estimate) or len(finite) < max(len(samples) / 2, significance.min_resamples(confidence)):
        return Estimate(estimate, math.nan, math.nan, confidence, len(finite))
    low, high = significance.interval_ends(finite, confidence)
    return Estimate(estimate, low, high, confidence, len(finite))


def standardised(values: np.ndarray) -> np.ndarray:
    """``values`` as z-scores (a constant metric stays at 0), at any scale of ``values``."""
    values = meta_figures.unit_scaled(values)
    spread = values.std()
    return (values - values.mean()) / (spread if spread > 0 else 1.0)


def _swap_units(values: np.ndarray, design: Design) -> list[tuple[np.ndarray, np.ndarray]]:
    """``values`` split into parts, each with the unit codes it is swapped by: each system's and
    each group's part (the additive fit of :func:`meta_figures.additive_parts`) by system and by
    group, and what is left by item. The parts sum back to ``values`` less their mean."""
    factors = [codes for codes in (design.systems, design.groups) if codes is not None]
    parts, left = meta_figures.additive_parts(values, factors)
    return [*zip(parts, factors, strict=True), (left, np.arange(len(values)))]


class _Permuted:
    """Each trial's |figure(one) - figure(other)| (called with a chunk of trials' swaps: for each
    unit, whether each of its codes swaps)."""

    def __init__(self, units: list[tuple[np.ndarray, np.ndarray, np.ndarray]], design: Design,
                 names: Sequence[str]) -> None:  # fmt: skip
        self.units, self.design, self.names = units, design, list(names)

    def __call__(self, swaps: Sequence[list[np.ndarray]]) -> np.ndarray:
        rated = meta_figures.Rated(self.design.human, self.design.systems, self.design.groups)
        n = len(self.design.human)
        found = np.empty((len(swaps), len(self.names)))
        for trial, drawn in enumerate(swaps):
            one, other = np.zeros(n), np.zeros(n)
            for (mine, theirs, codes), swap in zip(self.units, drawn, strict=True):
                swap = swap[codes]
                one += np.where(swap, theirs, mine)
                other += np.where(swap, mine, theirs)
            found[trial] = np.abs(
                meta_figures.compute_rated(one, rated, self.names)
                - meta_figures.compute_rated(other, rated, self.names)
            )
        return found


def permutation_test(
    a: np.ndarray,
    b: np.ndarray,
    design: Design,
    names: Sequence[str],
    resamples: int,
    seed: int,
    *,
    step: Callable[[], object] | None = None,
    processes: int | None = None,
) -> np.ndarray:
    """PERM-BOTH p-values of ``figure(a) - figure(b)`` for each named figure (NaN where the
    observed difference is not defined). With systems or groups, each metric's system part, group
    part and item part are swapped by system, by group and by item (see the module)."""
    significance.check_seed(seed)
    first, second = standardised(a), standardised(b)
    rated = meta_figures.Rated(design.human, design.systems, design.groups)
    observed = np.abs(
        meta_figures.compute_rated(first, rated, names) - meta_figures.compute_rated(second, rated, names)
    )
    units = [
        (mine, theirs, codes)
        for (mine, codes), (theirs, _) in zip(
            _swap_units(first, design), _swap_units(second, design), strict=True
        )
    ]
    rng = np.random.default_rng(seed)
    swaps = [
        [rng.integers(0, 2, size=int(codes.max()) + 1).astype(bool) for _, _, codes in units]
        for _ in range(resamples)
    ]
    trials = trial_pool.run_trials(_Permuted(units, design, names), swaps, len(a), processes, step)
    at_least = np.zeros(len(names))
    for trial in trials:
        at_least += np.nan_to_num(trial, nan=0.0) >= observed - significance.TIE_TOLERANCE
    p_values = (at_least + 1) / (resamples + 1)
    return np.where(np.isfinite(observed), p_values, math.nan)


def rank_groups(estimates: Sequence[float], p_values: np.ndarray, alpha: float) -> list[int]:
    """Each metric's group (1 best), ``mt-metrics-eval``'s clustering: in order of the figure, a
    metric opens a new group when its p-value against the first metric of the current group is
    below ``alpha``. ``p_values[i, j]`` is the test of metrics i and j; a NaN figure ranks last."""
    order = sorted(
        range(len(estimates)), key=lambda i: -estimates[i] if math.isfinite(estimates[i]) else math.inf
    )
    groups = [0] * len(estimates)
    group, leader = 1, order[0]
    for i in order:
        if i != leader and not p_values[leader, i] >= alpha:  # a NaN p-value tells nothing apart: new group
            group, leader = group + 1, i
        groups[i] = group
    return groups


def rater_views(raters: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For each rater (a column of ``raters``, NaN where that rater gave no rating): the positions
    where they and at least one other rated, their ratings there, and the others' mean there."""
    views = []
    for k in range(raters.shape[1]):
        others = np.delete(raters, k, axis=1)
        counted = np.sum(np.isfinite(others), axis=1)
        where = np.flatnonzero(np.isfinite(raters[:, k]) & (counted > 0))
        mean_of_others = np.nansum(others[where], axis=1) / counted[where]
        views.append((where, raters[where, k], mean_of_others))
    return views


def rater_ceiling(
    raters: np.ndarray, design: Design, names: Sequence[str], items: np.ndarray | None = None
) -> np.ndarray:
    """Every named figure of each rater against the others' mean, averaged over the raters
    (``items``: each row's story in a bootstrap resample, as :func:`meta_figures.compute` takes it)."""
    per_rater = []
    for where, own, others in rater_views(raters):
        part = design.subset(where)
        found = meta_figures.compute(
            own, others, part.systems, part.groups, names, None if items is None else items[where]
        )
        per_rater.append(found)
    with np.errstate(invalid="ignore"):
        stacked = np.array(per_rater)
        defined = np.isfinite(stacked)
        counts = defined.sum(axis=0)
        return np.where(
            counts > 0, np.where(defined, stacked, 0).sum(axis=0) / np.maximum(counts, 1), math.nan
        )


class _Ceilings:
    """:func:`rater_ceiling` on a chunk of resamples' item positions: one row a resample."""

    def __init__(self, raters: np.ndarray, design: Design, names: Sequence[str]) -> None:
        self.raters, self.design, self.names = raters, design, list(names)

    def __call__(self, indices: Sequence[np.ndarray]) -> np.ndarray:
        return np.array(
            [rater_ceiling(self.raters[i], self.design.subset(i), self.names, items=i) for i in indices]
        ).reshape(len(indices), len(self.names))


def bootstrap_ceiling(raters: np.ndarray, design: Design, names: Sequence[str], resamples: int, seed: int,
                      step: Callable[[], object] | None = None, processes: int | None = None) -> np.ndarray:  # fmt: skip
    """:func:`rater_ceiling` on each of the resamples :func:`bootstrap` draws with the same seed:
    an array (resamples, figures)."""
    significance.check_seed(seed)
    indices = list(resample_indices(design, resamples, seed))
    return trial_pool.run_trials(
        _Ceilings(raters, design, names), indices, len(design.human), processes, step
    )
