"""How well a metric agrees with human ratings, at every level a story set has: the figures of
``story-quality meta-evaluate``, each a function of one metric's scores and the ratings.

Every figure takes ``(metric, human, systems, groups)``: the items' scores and ratings (1-D, the
same length) and, where the data has them, each item's system and group (prompt) as integer
codes. A figure that the data cannot give (a constant side, too few items or systems) is NaN,
never an error: the bootstrap and the permutation test meet such resamples and count them out.

- ``pooled.*``: Pearson, Spearman and Kendall tau-b over every item (SciPy's definitions).
- ``within_system.*``: the mean of the per-system correlations (systems with 3 items or more
  and neither side constant): how well the metric orders one generator's stories.
- ``system.*``: the correlation of the systems' mean score with their mean rating (3 systems
  or more): how well it ranks the generators.
- ``group.kendall``: Kendall tau-b inside each group (prompt), averaged over the groups where
  it is defined, as HANNA (Chhun et al., 2022) reports it.
- ``residual.pearson``: Pearson of what is left of the scores and the ratings once each
  system's and each group's mean is removed (the two-way fixed-effects residuals, found by
  alternating projections): agreement that telling prompts and generators apart cannot give.
- ``pairwise.accuracy`` / ``pairwise.tie_calibrated``: the share of item pairs the metric
  orders as the ratings do, a pair tied in both counting as agreement (Deutsch, Foster and
  Freitag, 2023, "acc23"). Raw, a metric tie is an exact tie; tie-calibrated, every pair whose
  scores differ by at most epsilon is a metric tie, epsilon chosen to maximise the accuracy
  (:func:`tie_epsilon` gives it), as ``mt-metrics-eval`` does.

Baselines that need no model: :func:`length_scores` (words) and :func:`distinct_trigram_scores`
(distinct word 3-grams / all 3-grams), and the oracles :func:`mean_oracle` that score every
item with its system's or its group's mean rating.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

Figure = Callable[[np.ndarray, "Rated"], float]
# Fewest items a correlation is computed on, and fewest systems for a system-level one.
MIN_ITEMS = 3
# Alternating projections stop when the residuals move less than this (relative), or after so many rounds.
PROJECTION_TOLERANCE = 1e-12
PROJECTION_ROUNDS = 10_000
# Kendall's tau counted pair by pair up to this many pairs (n = 141), faster there than SciPy's
# O(n log n) count with its per-call overhead; SciPy's above.
PAIRS_AT_ONCE = 10_000
# Up to this many pairs (n = 350) SciPy's tau-b is still computed here, from the pairs' counts by
# SciPy's own formula (the same bits, without its per-call overhead); SciPy counts above.
PAIRS_COUNTED = 61_075
# Two pairs' score differences closer than this times the largest |score| are one candidate epsilon
# of the tie calibration: they differ by rounding only.
SAME_DIFFERENCE = 1e-12


def _constant(values: np.ndarray) -> bool:
    return len(values) == 0 or bool(np.ptp(values) == 0)


def unit_scaled(values: np.ndarray) -> np.ndarray:
    """``values`` times the power of two that brings their largest magnitude into [0.5, 1): exact
    (but for magnitudes some 300 decades below the largest), so that no sum or product of them
    overflows or vanishes, whatever the scale of the scores (zeros stay zeros)."""
    top = float(np.abs(values).max()) if len(values) else 0.0
    if top == 0 or not math.isfinite(top):
        return values
    return np.ldexp(values, -math.frexp(top)[1])


def _centred(values: np.ndarray) -> np.ndarray:
    """``values`` less their mean, divided by the largest deviation (the largest is 1 in magnitude)."""
    deviations = unit_scaled(values)
    deviations = deviations - deviations.mean()
    return deviations / np.abs(deviations).max()


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing their average rank (SciPy's ``rankdata``, without its
    per-call overhead, which a bootstrap pays thousands of times)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    first = np.flatnonzero(starts)
    counts = np.diff(np.r_[first, len(values)])
    ranks = np.empty(len(values))
    ranks[order] = (first + (counts + 1) / 2)[np.cumsum(starts) - 1]
    return ranks


@functools.lru_cache(maxsize=8)
def upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of ``n`` positions (kept for the next resample of the same size)."""
    first, second = np.triu_indices(n, 1)
    first.flags.writeable = second.flags.writeable = False
    return first, second


def group_means(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each code's mean of ``values``, indexed by code (codes are 0..k-1; an absent code's mean is NaN)."""
    counts = np.bincount(codes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(codes, weights=values, minlength=len(counts)) / counts


class Rated:
    """The ratings side of every figure (the ratings, and each item's system and group codes or
    None), each part computed once, when first asked for, however many metrics are scored
    against the same items: a bootstrap resample scores every metric on one, a permutation test
    every trial."""

    def __init__(
        self, human: np.ndarray, systems: np.ndarray | None = None, groups: np.ndarray | None = None
    ):
        self.human, self.systems, self.groups = human, systems, groups

    @functools.cached_property
    def constant(self) -> bool:
        return _constant(self.human)

    @functools.cached_property
    def centred(self) -> np.ndarray:
        return _centred(self.human)

    @functools.cached_property
    def ranks(self) -> Rated:
        return Rated(average_ranks(self.human))

    @functools.cached_property
    def pair_signs(self) -> np.ndarray:
        """The sign of the ratings' difference over every pair of :func:`upper_pairs`."""
        first, second = upper_pairs(len(self.human))
        return np.sign(self.human[first] - self.human[second])

    @functools.cached_property
    def system_parts(self) -> list[tuple[np.ndarray, Rated]]:
        """Each system's positions (in item order) and its ratings."""
        parts = []
        for code in np.unique(self.systems):
            positions = np.flatnonzero(self.systems == code)
            parts.append((positions, Rated(self.human[positions])))
        return parts

    @functools.cached_property
    def system_means(self) -> tuple[np.ndarray, Rated]:
        """Which system codes are present, and their mean ratings (summed at unit scale)."""
        present = np.bincount(self.systems) > 0
        return present, Rated(group_means(unit_scaled(self.human), self.systems)[present])

    @functools.cached_property
    def group_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The pairs inside each group (first, second, their group), the ratings' sign over them
        and the untied pairs a group has."""
        first, second = pair_indices(self.groups, len(self.human))
        codes = self.groups[first]
        sign = np.sign(self.human[first] - self.human[second])
        size = int(self.groups.max()) + 1 if len(self.groups) else 0
        return first, second, codes, sign, np.bincount(codes, weights=sign != 0, minlength=size)

    @functools.cached_property
    def residual(self) -> Rated | None:
        """The ratings less every system's and group's mean (None when that leaves nothing)."""
        left = _left_inside(self.human, self)
        return None if left is None else Rated(left)


def _pearson(x: np.ndarray, rated: Rated) -> float:
    if len(x) < MIN_ITEMS or _constant(x) or rated.constant:
        return math.nan
    dx, dy = _centred(x), rated.centred
    value = float(dx @ dy / math.sqrt(float(dx @ dx) * float(dy @ dy)))
    return max(-1.0, min(1.0, value))


def _spearman(x: np.ndarray, rated: Rated) -> float:
    if len(x) < MIN_ITEMS or _constant(x) or rated.constant:
        return math.nan
    return _pearson(average_ranks(x), rated.ranks)


def _kendall(x: np.ndarray, rated: Rated) -> float:
    if len(x) < MIN_ITEMS or _constant(x) or rated.constant:
        return math.nan
    pairs = len(x) * (len(x) - 1) // 2
    if pairs > PAIRS_COUNTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(stats.kendalltau(x, rated.human).statistic)
    first, second = upper_pairs(len(x))
    sign_x, sign_y = np.sign(x[first] - x[second]), rated.pair_signs
    untied_x, untied_y = np.count_nonzero(sign_x), np.count_nonzero(sign_y)
    # Concordant less discordant pairs: a sum of -1, 0 and 1, exact in any order (and no BLAS
    # call, whose threads would fight the trial pool's processes for the cores).
    concordance = float((sign_x * sign_y).sum())
    if pairs > PAIRS_AT_ONCE:  # SciPy's expression: concordant less discordant over the untied pairs
        tau = np.int64(concordance) / np.sqrt(np.int64(untied_x)) / np.sqrt(np.int64(untied_y))
        return float(np.minimum(1.0, max(-1.0, tau)))
    untied = math.sqrt(float(untied_x) * float(untied_y))
    return max(-1.0, min(1.0, concordance / untied))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN below ``MIN_ITEMS`` items or when a side is constant. Computed on
    deviations divided by the largest (:func:`_centred`): the same at any scale of either side."""
    return _pearson(x, Rated(y))


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (Pearson of average ranks, as SciPy); NaN where Pearson would be."""
    return _spearman(x, Rated(y))


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (SciPy's definition); NaN where Pearson would be. Counted over every pair up
    to ``PAIRS_AT_ONCE`` pairs (faster than SciPy on the small sets a bootstrap resamples), by SciPy above."""
    return _kendall(x, Rated(y))


Correlation = Callable[[np.ndarray, Rated], float]
CORRELATIONS: dict[str, Correlation] = {"pearson": _pearson, "spearman": _spearman, "kendall": _kendall}


def _mean_of_defined(values: Sequence[float]) -> float:
    defined = [value for value in values if not math.isnan(value)]
    return float(np.mean(defined)) if defined else math.nan


def within_system(correlation: Correlation) -> Figure:
    def figure(metric: np.ndarray, rated: Rated) -> float:
        return _mean_of_defined(
            [correlation(metric[positions], part) for positions, part in rated.system_parts]
        )

    return figure


def system_level(correlation: Correlation) -> Figure:
    def figure(metric: np.ndarray, rated: Rated) -> float:
        present, means = rated.system_means
        metric = unit_scaled(metric)  # sums that cannot overflow
        return correlation(group_means(metric, rated.systems)[present], means)

    return figure


def pair_indices(codes: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of positions, or of positions that share a code when ``codes`` is given."""
    if codes is None:
        return np.triu_indices(n, 1)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], n]
    block_end = np.repeat(ends, ends - starts)
    after = block_end - np.arange(n) - 1  # partners after each position inside its block
    first = np.repeat(np.arange(n), after)
    offsets = np.arange(len(first)) - np.repeat(np.cumsum(after) - after, after) + 1
    return order[first], order[first + offsets]


def group_kendall(metric: np.ndarray, rated: Rated) -> float:
    """Kendall tau-b inside each group, averaged over the groups where it is defined (HANNA)."""
    first, second, codes, sign_human, untied_human = rated.group_pairs
    sign_metric = np.sign(metric[first] - metric[second])
    size = len(untied_human)
    concordance = np.bincount(codes, weights=sign_metric * sign_human, minlength=size)
    untied_metric = np.bincount(codes, weights=sign_metric != 0, minlength=size)
    defined = (untied_metric > 0) & (untied_human > 0)
    if not defined.any():
        return math.nan
    taus = concordance[defined] / np.sqrt(untied_metric[defined] * untied_human[defined])
    return float(np.mean(np.clip(taus, -1.0, 1.0)))


def additive_parts(values: np.ndarray, factors: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """``values`` less their mean as the best additive fit of one mean per level of each factor
    (least squares; each factor's part per item) and what the fit leaves, by alternating
    projections: each factor's level means removed in turn until nothing moves."""
    left = values - values.mean()
    parts = [np.zeros(len(values)) for _ in factors]
    scale = float(np.abs(left).max()) if len(left) else 0.0  # relative: the same rounds at any scale
    for _ in range(PROJECTION_ROUNDS):
        moved = 0.0
        for part, codes in zip(parts, factors, strict=True):
            means = group_means(left, codes)[codes]
            left = left - means
            part += means
            moved = max(moved, float(np.abs(means).max()) if len(means) else 0.0)
        if moved <= PROJECTION_TOLERANCE * scale:
            break
    return parts, left


def residuals(values: np.ndarray, factors: Sequence[np.ndarray]) -> np.ndarray:
    """``values`` less the best additive fit of one mean per level of each factor (:func:`additive_parts`)."""
    return additive_parts(values, factors)[1]


def _left_inside(values: np.ndarray, rated: Rated) -> np.ndarray | None:
    """``values`` (at unit scale) less every system's and group's mean of ``rated``'s design; None
    when nothing is left inside the cells: the factors explain every item."""
    factors = [codes for codes in (rated.systems, rated.groups) if codes is not None]
    values = unit_scaled(values)
    left = residuals(values, factors)
    return None if np.abs(left).max() <= 1e-9 * np.abs(values).max() else left


def residual_pearson(metric: np.ndarray, rated: Rated) -> float:
    """Pearson of the scores and ratings with every system's and group's mean removed."""
    if len(metric) < MIN_ITEMS:
        return math.nan
    left = _left_inside(metric, rated)
    if left is None or rated.residual is None:
        return math.nan
    return _pearson(left, rated.residual)


def _pair_signs(metric: np.ndarray, rated: Rated, items: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    first, second = upper_pairs(len(metric))
    if items is None:
        return metric[first] - metric[second], rated.pair_signs
    other = items[first] != items[second]  # a story drawn twice by a bootstrap is no pair of stories
    first, second = first[other], second[other]
    return metric[first] - metric[second], np.sign(rated.human[first] - rated.human[second])


def _counted(
    size: np.ndarray,
    tied: np.ndarray,
    alike: np.ndarray,
    rounding: float,
    weight: np.ndarray | None = None,
    totals: tuple[int, int, int] | None = None,
) -> tuple[float, float, float]:
    """(raw acc23, tie-calibrated acc23, its epsilon) of pairs sorted by ``size`` (their |metric
    difference|), ``tied`` where the people tied them, ``alike`` where metric and people order them
    alike; ``weight``, when given, counts each pair so many times (a bootstrap's copies).
    ``totals`` (all pairs, the alike ones, raw acc23's count) say that the pairs given are only
    those up to :func:`_no_better_beyond`: the epsilons beyond cannot be best, and are not sorted.
    Without them (a resample's count, every pair given) they are the weighted counts' own."""
    if weight is None:
        tied_before, alike_before = np.cumsum(tied), np.cumsum(alike)
    else:
        tied_before, alike_before = np.cumsum(weight * tied), np.cumsum(weight * alike)
    if totals is None:
        totals = (weight.sum(), alike_before[-1], alike_before[-1] + weight[(size == 0) & tied].sum())
    total, alike_total, raw = totals
    # The last pair of each distinct |difference|, those apart by rounding only being one: 0.3 - 0.1
    # and 0.5 - 0.3 differ in their last bits, and differently at another scale of the scores.
    ends = np.flatnonzero(np.r_[size[1:] - size[:-1] > rounding, True])
    correct = tied_before[ends] + (alike_total - alike_before[ends])
    if size[0] > 0:  # epsilon 0 ties nothing: the accuracy without metric ties is a candidate too
        ends = np.r_[-1, ends]
        correct = np.r_[alike_total, correct]
    best = int(np.argmax(correct))
    epsilon = 0.0 if ends[best] < 0 else float(size[ends[best]])
    return float(raw / total), float(correct[best] / total), epsilon


def _pair_classes(
    difference: np.ndarray, human_sign: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair's |metric difference|, whether the people tied it, and whether metric and people
    order it alike."""
    tied = human_sign == 0
    return np.abs(difference), tied, (np.sign(difference) == human_sign) & ~tied


def _no_better_beyond(size: np.ndarray, tied: np.ndarray, alike: np.ndarray) -> float:
    """A size beyond which no epsilon is best: the smallest at which more alike pairs lie at or
    below than there are human-tied pairs in all. An epsilon there ties away more agreement than
    every tied pair can give back, so its accuracy is below epsilon 0's: only the pairs up to it
    need sorting (infinite where the alike pairs are too few to pass the tied ones)."""
    tied_total = int(np.count_nonzero(tied))
    alike_sizes = size[alike]
    if len(alike_sizes) <= tied_total:
        return math.inf
    return float(np.partition(alike_sizes, tied_total)[tied_total])


def pairwise_accuracies(
    metric: np.ndarray, human: np.ndarray, items: np.ndarray | None = None
) -> tuple[float, float, float]:
    """(raw acc23, tie-calibrated acc23, its epsilon), every candidate epsilon (0 and each distinct
    |difference|) counted at once from the pairs sorted by |difference| (those up to
    :func:`_no_better_beyond`: the rest cannot hold the best). ``items``, each position's story in a
    bootstrap resample, leaves out the pairs of a story's copies: tied on both sides, they would
    count as agreement that the stories never gave."""
    return _pairwise(metric, Rated(human), items)


def _pairwise(
    metric: np.ndarray, rated: Rated, items: np.ndarray | None = None
) -> tuple[float, float, float]:
    difference, human_sign = _pair_signs(metric, rated, items)
    if len(difference) == 0:
        return math.nan, math.nan, math.nan
    size, tied, alike = _pair_classes(difference, human_sign)
    alike_total = int(np.count_nonzero(alike))
    totals = (len(size), alike_total, alike_total + int(np.count_nonzero((size == 0) & tied)))
    near = np.flatnonzero(size <= _no_better_beyond(size, tied, alike))
    order = near[np.argsort(size[near])]  # the order inside a run of equal sizes changes no count at its end
    rounding = SAME_DIFFERENCE * float(np.abs(metric).max())
    return _counted(size[order], tied[order], alike[order], rounding, totals=totals)


@dataclass(frozen=True)
class SortedPairs:
    """Every pair of one metric's items, sorted by |difference| once: a bootstrap resample, which
    holds each item some number of times, counts each pair of two distinct items as often as the
    product of their copies (:func:`resampled_accuracies`), with no sort of its own."""

    metric: np.ndarray
    first: np.ndarray
    second: np.ndarray
    size: np.ndarray
    tied: np.ndarray
    alike: np.ndarray


def sorted_pairs(metric: np.ndarray, rated: Rated) -> SortedPairs:
    first, second = upper_pairs(len(metric))
    size, tied, alike = _pair_classes(metric[first] - metric[second], rated.pair_signs)
    order = np.argsort(size)
    return SortedPairs(metric, first[order], second[order], size[order], tied[order], alike[order])


def resampled_accuracies(pairs: SortedPairs, copies: np.ndarray) -> tuple[float, float]:
    """(raw acc23, tie-calibrated acc23) of the resample holding item i ``copies[i]`` times: what
    :func:`pairwise_accuracies` gives on that resample with its ``items``, to the last bit (the
    same integer counts, over the same sizes)."""
    weight = copies[pairs.first] * copies[pairs.second]
    present = np.flatnonzero(weight)
    if len(present) == 0:
        return math.nan, math.nan
    rounding = SAME_DIFFERENCE * float(np.abs(pairs.metric[copies > 0]).max())
    found = _counted(
        pairs.size[present], pairs.tied[present], pairs.alike[present], rounding, weight[present]
    )
    return found[0], found[1]


def pairwise_accuracy(metric: np.ndarray, human: np.ndarray) -> float:
    """acc23 with only exact metric ties: pairs ordered alike, or tied in both, over all pairs."""
    return pairwise_accuracies(metric, human)[0]


def tie_calibrated_accuracy(metric: np.ndarray, human: np.ndarray) -> float:
    """acc23 at the epsilon that maximises it (Deutsch et al., 2023)."""
    return pairwise_accuracies(metric, human)[1]


def tie_epsilon(metric: np.ndarray, human: np.ndarray) -> float:
    """The smallest epsilon at which the tie-calibrated accuracy is reached."""
    return pairwise_accuracies(metric, human)[2]


def _pooled(correlation: Correlation) -> Figure:
    def figure(metric: np.ndarray, rated: Rated) -> float:
        return correlation(metric, rated)

    return figure


# The pairwise figures' places in what pairwise_accuracies returns.
PAIRWISE = {"pairwise.accuracy": 0, "pairwise.tie_calibrated": 1}
# Every figure, by name, with what the data must carry for it: None, "systems", "groups" or "either".
FIGURES: dict[str, tuple[Figure, str | None]] = {
    **{f"pooled.{name}": (_pooled(function), None) for name, function in CORRELATIONS.items()},
    **{f"within_system.{name}": (within_system(function), "systems") for name, function in CORRELATIONS.items()},
    **{f"system.{name}": (system_level(function), "systems") for name, function in CORRELATIONS.items()},
    "group.kendall": (group_kendall, "groups"),
    "residual.pearson": (residual_pearson, "either"),
    "pairwise.accuracy": (lambda metric, rated: _pairwise(metric, rated)[0], None),
    "pairwise.tie_calibrated": (lambda metric, rated: _pairwise(metric, rated)[1], None),
}  # fmt: skip

# How the table names each figure.
FIGURE_LABELS = {
    "pooled.pearson": "pooled Pearson",
    "pooled.spearman": "pooled Spearman",
    "pooled.kendall": "pooled Kendall",
    "within_system.pearson": "within-system Pearson",
    "within_system.spearman": "within-system Spearman",
    "within_system.kendall": "within-system Kendall",
    "system.pearson": "system-level Pearson",
    "system.spearman": "system-level Spearman",
    "system.kendall": "system-level Kendall",
    "group.kendall": "per-group Kendall",
    "residual.pearson": "residual Pearson",
    "pairwise.accuracy": "pairwise accuracy",
    "pairwise.tie_calibrated": "pairwise acc. (ties cal.)",
}


def available_figures(has_systems: bool, has_groups: bool) -> list[str]:
    """The names of the figures data with (or without) systems and groups can give."""
    have = {None: True, "systems": has_systems, "groups": has_groups, "either": has_systems or has_groups}
    return [name for name, (_, needs) in FIGURES.items() if have[needs]]


def compute(
    metric: np.ndarray,
    human: np.ndarray,
    systems: np.ndarray | None,
    groups: np.ndarray | None,
    names: Sequence[str],
    items: np.ndarray | None = None,
) -> np.ndarray:
    """The named figures of one metric's scores against the ratings, in the order named (both
    pairwise accuracies from one count of the pairs). ``items`` names each position's story in a
    bootstrap resample (see :func:`pairwise_accuracies`)."""
    return compute_rated(metric, Rated(human, systems, groups), names, items)


def compute_rated(
    metric: np.ndarray, rated: Rated, names: Sequence[str], items: np.ndarray | None = None
) -> np.ndarray:
    """:func:`compute` against ratings whose side of each figure is kept for the next metric."""
    pairwise = None
    found = []
    for name in names:
        if name in PAIRWISE:
            pairwise = _pairwise(metric, rated, items) if pairwise is None else pairwise
            found.append(pairwise[PAIRWISE[name]])
        else:
            found.append(FIGURES[name][0](metric, rated))
    return np.array(found, dtype=float)


def length_scores(texts: Sequence[str]) -> np.ndarray:
    """Each text's length in words (split at white space): a baseline with no model."""
    return np.array([len(text.split()) for text in texts], dtype=float)


def distinct_trigram_scores(texts: Sequence[str]) -> np.ndarray:
    """Each text's distinct word 3-grams over all its 3-grams (words split at white space, case
    kept); 1.0 for a text of fewer than three words (nothing repeats)."""
    ratios = []
    for text in texts:
        words = text.split()
        trigrams = list(zip(words, words[1:], words[2:], strict=False))
        ratios.append(len(set(trigrams)) / len(trigrams) if trigrams else 1.0)
    return np.array(ratios, dtype=float)


def mean_oracle(human: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Every item scored with its code's (system's or group's) mean rating: what knowing only the
    system or the prompt can reach."""
    return group_means(human, codes)[codes]
