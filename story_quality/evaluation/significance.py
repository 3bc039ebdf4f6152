"""How sure is a mean score, and is one system's mean really above another's?

Three statistics over per-text scores (a system's score is the mean of its texts' scores), each
drawn from its own seeded ``numpy.random.Generator`` so a result depends only on the scores, the
number of resamples and the seed:

- :func:`bootstrap_interval`: the percentile bootstrap confidence interval of a mean. The
  interval's ends are order statistics of the resampled means, as sacrebleu takes them: with
  1,000 resamples and 95 %, the 26th and the 975th smallest (no interpolation).
  :func:`bootstrap_mean` adds the standard error of the same resamples: the package's one
  bootstrap of a mean, used by ``compare`` and by the evaluator alike.
- :func:`paired_bootstrap`: paired bootstrap resampling (Koehn, 2004): the same resampled rows
  for both systems. The p-value tests the null hypothesis properly: the resampled differences of
  means are shifted to the null (each minus the observed difference, so that they centre on 0)
  and the p-value is the share whose absolute value is at least the observed absolute
  difference (Efron and Tibshirani, 1993, section 16.4; Berg-Kirkpatrick et al., 2012). **This
  differs from sacrebleu's** ``--paired-bs``, which centres the *absolute* resampled differences
  on their own mean: under a true null that folds the distribution and shrinks its spread, and
  12-16 % of its p-values fall below 0.05 (two systems drawn from one distribution, n = 50). The
  shifted test rejects at its level: ``tests/evaluation/test_significance.py`` simulates the null
  (benchmarks/log/2026-11-25-compare.md, "Paired tests under the null", gives the rates).
- Too little data is refused or named: a paired test needs :data:`MIN_PAIRED_ROWS` rows; below
  :data:`FEW_ROWS` the bootstrap's p-value is too small (its resamples cannot vary more than the
  rows do; one row gives the smallest p there is), which :func:`few_rows_warning` says;
  an interval needs enough resamples that its ends are not the extreme resamples
  (:func:`min_resamples`), and at most :data:`MAX_RESAMPLES` are drawn.
- :func:`approximate_randomization`: the paired approximate randomization test (Riezler and
  Maxwell, 2005), as sacrebleu's ``--paired-ar`` defines it: each trial swaps the two systems'
  scores of every row with probability 1/2; the p-value is the share of trials whose absolute
  difference of means is at least the observed one.

Both p-values are ``(1 + count) / (1 + resamples)``, so never 0. sacrebleu counts a statistic
strictly above the observed one; here a tie (within :data:`TIE_TOLERANCE`) counts too, as in
Riezler and Maxwell's definition, so a system compared with itself gets p = 1 rather than the
smallest possible p. Citations: ``story_quality.citation("koehn-2004-statistical")`` and
``story_quality.citation("riezler-maxwell-2005-pitfalls")``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
# More resamples change a p-value by less than its own resolution and take minutes.
MAX_RESAMPLES = 1_000_000
# A seed is a non-negative integer of at most this many bits (numpy takes any; a person types few).
SEED_BITS = 128
# Fewer rows than this and a paired test cannot say anything (one row: no variation at all).
MIN_PAIRED_ROWS = 2
# Fewer rows than this and the paired bootstrap's p-value is too small (rejects too often under
# the null); approximate randomization stays valid and is the one to read.
FEW_ROWS = 30
# A resampled statistic this close to the observed one is a tie (rounding, not a difference).
TIE_TOLERANCE = 1e-12
# Resamples drawn at a time: at most this many row indices in memory (32 MiB of int64).
_BLOCK_ELEMENTS = 1 << 22

# Scores as the functions take them: a list or an array, one a row.
Scores = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Interval:
    """An estimate and its confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float


@dataclass(frozen=True)
class PairedTest:
    """Two systems on the same rows: the mean difference (b - a), its interval and both p-values."""

    n: int
    difference: Interval
    p_paired_bootstrap: float
    p_approximate_randomization: float


def _scores(values: Scores, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name}: expected a non-empty list of scores, got shape {array.shape}")
    if not np.isfinite(array).all():
        first = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}[{first}] is {array[first]}: every score must be a finite number")
    return array


def min_resamples(confidence: float) -> int:
    """The fewest resamples whose ``confidence`` interval is not bounded by the extreme resamples
    (its order statistic k = floor(R (1 - confidence) / 2) is at least 1).

    >>> min_resamples(0.95)
    40
    """
    return math.ceil(2 / (1 - confidence) - 1e-9)


def check_seed(seed: int) -> None:
    """A seed is a non-negative integer below ``2 ** SEED_BITS`` (a ValueError naming it if not)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"seed must be an integer from 0 to 2**{SEED_BITS} - 1, got {seed!r}")


def _check_settings(resamples: int, confidence: float, seed: int = 0, interval: bool = True) -> None:
    """Resamples (enough for an ``interval`` at ``confidence``, at most MAX_RESAMPLES), level and seed."""
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    if resamples > MAX_RESAMPLES:
        raise ValueError(f"resamples must be at most {MAX_RESAMPLES:,}, got {resamples:,}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 for 95 %), got {confidence!r}")
    if interval and resamples < min_resamples(confidence):
        raise ValueError(
            f"resamples must be at least {min_resamples(confidence)} for a {confidence:.0%} interval "
            f"(fewer, and its ends are the smallest and largest resample), got {resamples}"
        )
    check_seed(seed)


def few_rows_warning(n: int) -> str | None:
    """Why a paired bootstrap p-value on ``n`` rows is not to be trusted, or None when it is."""
    if n >= FEW_ROWS:
        return None
    return (
        f"only {n} paired rows: with fewer than {FEW_ROWS} the paired bootstrap's p-value is too small "
        "(the resamples cannot vary more than the rows do); read the approximate randomization p-value"
    )


def _blocks(resamples: int, n: int) -> Iterator[int]:
    """How many resamples to draw at a time so that a block holds at most ``_BLOCK_ELEMENTS`` draws."""
    size = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, resamples, size):
        yield min(size, resamples - start)


def resampled_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The mean of each of ``resamples`` bootstrap resamples (rows drawn with replacement)."""
    rng = np.random.default_rng(seed)
    n = len(values)
    return np.concatenate(
        [values[rng.integers(0, n, size=(block, n))].mean(axis=1) for block in _blocks(resamples, n)]
    )


def interval_ends(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The order statistics that bound ``confidence`` of ``samples``: sorted positions k and R - 1 - k,
    k = floor(R (1 - confidence) / 2)."""
    ordered = np.sort(samples)
    k = math.floor(len(ordered) * (1 - confidence) / 2)
    return float(ordered[k]), float(ordered[len(ordered) - 1 - k])


def bootstrap_interval(
    values: Scores,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap interval.

    >>> interval = bootstrap_interval([0.2, 0.4, 0.6, 0.8], resamples=200, seed=1)
    >>> round(interval.estimate, 2), interval.low <= interval.estimate <= interval.high
    (0.5, True)
    """
    return bootstrap_mean(values, resamples, seed, confidence)[0]


def bootstrap_mean(
    values: Scores,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[Interval, float]:
    """The mean of ``values`` with its percentile bootstrap interval (:func:`bootstrap_interval`'s, the
    same resamples) and its bootstrap standard error (the resampled means' standard deviation).

    The one bootstrap of the package: ``compare`` and the evaluator
    (:mod:`story_quality.evaluation.evaluator`) both call it, so that the same scores, resamples
    and seed give the same interval. Scores that are all equal give the interval of that one value.

    >>> interval, error = bootstrap_mean([0.5] * 8, resamples=100)
    >>> (interval.low, interval.estimate, interval.high), error
    ((0.5, 0.5, 0.5), 0.0)
    """
    _check_settings(resamples, confidence, seed)
    scores = _scores(values, "values")
    means = resampled_means(scores, resamples, seed)
    low, high = interval_ends(means, confidence)
    error = float(means.std(ddof=1)) if resamples > 1 else 0.0
    return Interval(float(scores.mean()), low, high, confidence), error


def _at_least(statistics: np.ndarray, observed: float) -> int:
    return int(np.count_nonzero(statistics >= observed - TIE_TOLERANCE))


def _p_value(count: int, resamples: int) -> float:
    return (count + 1) / (resamples + 1)


def _paired_scores(a: Scores, b: Scores) -> np.ndarray:
    """``b - a`` row by row, after checking both hold the same number of finite scores."""
    first, second = _scores(a, "a"), _scores(b, "b")
    if len(first) != len(second):
        raise ValueError(
            f"a paired test needs the same rows in both systems; got {len(first)} and {len(second)} scores"
        )
    if len(first) < MIN_PAIRED_ROWS:
        raise ValueError(
            f"a paired test needs at least {MIN_PAIRED_ROWS} rows, got {len(first)}: one row cannot show "
            "whether a difference is chance"
        )
    return second - first


def paired_bootstrap(
    a: Scores,
    b: Scores,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[Interval, float]:
    """Koehn's paired bootstrap on row-aligned scores: the difference of means ``b - a`` with its
    bootstrap interval, and the p-value that the two systems differ only by chance.

    The p-value is the share of resampled differences of means ``d*`` that, shifted to the null
    (``d* - d``, ``d`` the observed difference), lie at least as far from 0 as ``d`` does:
    ``(1 + #{|d* - d| >= |d|}) / (1 + R)``. sacrebleu instead counts ``|d*| - mean|d*| >= |d|``,
    which is too small under the null (see the module's docstring).

    >>> difference, p = paired_bootstrap([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], resamples=100)
    >>> difference.estimate, p
    (0.0, 1.0)
    """
    _check_settings(resamples, confidence, seed)
    differences = _paired_scores(a, b)
    resampled = resampled_means(differences, resamples, seed)
    low, high = interval_ends(resampled, confidence)
    observed = float(differences.mean())
    count = _at_least(np.abs(resampled - observed), abs(observed))
    return Interval(observed, low, high, confidence), _p_value(count, resamples)


def approximate_randomization(
    a: Scores,
    b: Scores,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> float:
    """Riezler and Maxwell's paired approximate randomization test: the p-value that swapping the
    systems' scores row by row gives a difference of means at least as large as the observed one.

    Swapping row ``i`` turns its difference ``b_i - a_i`` into its negative, so a trial's
    difference of means is ``mean(s_i (b_i - a_i))`` with each sign ``s_i`` +1 or -1 at random.

    >>> approximate_randomization([0.0] * 30, [1.0] * 30, resamples=200) < 0.01
    True
    """
    _check_settings(resamples, DEFAULT_CONFIDENCE, seed, interval=False)
    differences = _paired_scores(a, b)
    observed = abs(float(differences.mean()))
    rng = np.random.default_rng(seed)
    n = len(differences)
    count = 0
    for block in _blocks(resamples, n):
        signs = 1 - 2 * rng.integers(0, 2, size=(block, n))
        count += _at_least(np.abs(signs @ differences) / n, observed)
    return _p_value(count, resamples)


def compare_paired(a: Scores, b: Scores, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   confidence: float = DEFAULT_CONFIDENCE) -> PairedTest:  # fmt: skip
    """Both paired tests of ``b`` against ``a`` (row-aligned), with the interval of ``b - a``."""
    difference, p_bootstrap = paired_bootstrap(a, b, resamples, seed, confidence)
    p_randomization = approximate_randomization(a, b, resamples, seed)
    return PairedTest(len(np.asarray(a)), difference, p_bootstrap, p_randomization)


# The settings of every resampling statistic, as a command's options and a report's fields name them.
SETTINGS = ("resamples", "seed", "confidence")


def settings_of(holder: object) -> dict[str, Any]:
    """The resampling settings an object carries (a report, a command line's options), by name."""
    return {name: getattr(holder, name) for name in SETTINGS}


def check_command_settings(resamples: int, seed: int, confidence: float) -> None:
    """A command's ``--resamples``, ``--seed`` and ``--confidence`` as the statistics take them, or a
    ValueError naming the option (each command raises it as its own usage error)."""
    if not 0 < confidence < 1:
        raise ValueError(f"--confidence must be between 0 and 1 (0.95 for 95 %), got {confidence}")
    low = min_resamples(confidence)
    if not low <= resamples <= MAX_RESAMPLES:
        raise ValueError(
            f"--resamples must be from {low} (fewer, and a {confidence:.0%} interval's ends are the extreme "
            f"resamples) to {MAX_RESAMPLES:,} (more take minutes and change no printed digit), got {resamples}"
        )
    try:
        check_seed(seed)
    except ValueError as error:
        raise ValueError(f"--{error}") from None
