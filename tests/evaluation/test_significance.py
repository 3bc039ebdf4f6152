"""The bootstrap interval and both paired tests, each against a slow loop written here from the definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from story_quality import citation
from story_quality.evaluation import significance


def scores(seed: int, n: int, shift: float = 0.0) -> list[float]:
    return [min(1.0, max(0.0, x + shift)) for x in np.random.default_rng(seed).uniform(0, 1, n)]


def slow_resampled_means(values: list[float], resamples: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(resamples):
        rows = rng.integers(0, len(values), size=len(values))
        means.append(sum(values[i] for i in rows) / len(values))
    return means


def slow_ends(samples: list[float], confidence: float) -> tuple[float, float]:
    ordered = sorted(samples)
    k = int(len(ordered) * (1 - confidence) / 2)
    return ordered[k], ordered[len(ordered) - 1 - k]


def slow_paired_bootstrap(a, b, resamples, seed, confidence):
    differences = [y - x for x, y in zip(a, b, strict=True)]
    resampled = slow_resampled_means(differences, resamples, seed)
    observed = sum(differences) / len(differences)
    shifted_to_the_null = [d - observed for d in resampled]
    count = sum(1 for d in shifted_to_the_null if abs(d) >= abs(observed) - 1e-12)
    return observed, slow_ends(resampled, confidence), (count + 1) / (resamples + 1)


def slow_approximate_randomization(a, b, resamples, seed):
    rng = np.random.default_rng(seed)
    observed = abs(sum(b) / len(b) - sum(a) / len(a))
    count = 0
    for _ in range(resamples):
        swap = rng.integers(0, 2, size=len(a))
        first = [y if s else x for x, y, s in zip(a, b, swap, strict=True)]
        second = [x if s else y for x, y, s in zip(a, b, swap, strict=True)]
        count += abs(sum(second) / len(b) - sum(first) / len(a)) >= observed - 1e-12
    return (count + 1) / (resamples + 1)


@pytest.mark.parametrize(("n", "resamples", "seed", "confidence"), [(7, 50, 0, 0.95), (23, 301, 5, 0.9)])
def test_bootstrap_interval_equals_the_slow_loop(n, resamples, seed, confidence):
    values = scores(seed + 1, n)
    got = significance.bootstrap_interval(values, resamples=resamples, seed=seed, confidence=confidence)
    low, high = slow_ends(slow_resampled_means(values, resamples, seed), confidence)
    assert got.estimate == pytest.approx(sum(values) / n, abs=1e-12)
    assert (got.low, got.high) == pytest.approx((low, high), abs=1e-12)
    assert got.low < got.estimate < got.high


def test_resampling_in_blocks_draws_the_same_resamples(monkeypatch):
    values = np.array(scores(3, 11))
    whole = significance.resampled_means(values, 40, seed=9)
    monkeypatch.setattr(significance, "_BLOCK_ELEMENTS", 30)  # blocks of 2 resamples
    assert list(significance._blocks(40, 11))[:2] == [2, 2]
    np.testing.assert_array_equal(significance.resampled_means(values, 40, seed=9), whole)


def test_the_interval_ends_are_sacrebleus_order_statistics():
    samples = np.arange(1000.0)[::-1]  # 999 .. 0
    assert significance.interval_ends(samples, 0.95) == (25.0, 974.0)


@pytest.mark.parametrize(("n", "resamples", "seed", "shift"), [(9, 60, 0, 0.05), (31, 257, 4, 0.2)])
def test_paired_bootstrap_equals_the_slow_loop(n, resamples, seed, shift):
    a, b = scores(seed, n), scores(seed, n, shift=shift)
    b = [y + 0.3 * (x - 0.5) for x, y in zip(scores(seed + 7, n), b, strict=True)]  # not a constant shift
    difference, p = significance.paired_bootstrap(a, b, resamples=resamples, seed=seed)
    observed, (low, high), slow_p = slow_paired_bootstrap(a, b, resamples, seed, 0.95)
    assert difference.estimate == pytest.approx(observed, abs=1e-12)
    assert (difference.low, difference.high) == pytest.approx((low, high), abs=1e-12)
    assert p == slow_p


@pytest.mark.parametrize(("n", "resamples", "seed"), [(8, 64, 0), (40, 333, 2)])
def test_approximate_randomization_equals_the_slow_loop(n, resamples, seed):
    a = scores(seed, n)
    b = [x + d for x, d in zip(a, np.random.default_rng(seed + 3).normal(0.05, 0.2, n), strict=True)]
    got = significance.approximate_randomization(a, b, resamples=resamples, seed=seed)
    assert got == slow_approximate_randomization(a, b, resamples, seed)


def test_approximate_randomization_on_few_rows_matches_the_exact_permutation_test():
    # With 5 rows there are 32 sign patterns; many trials approach the exact share.
    a, b = [0.1, 0.5, 0.2, 0.4, 0.3], [0.3, 0.6, 0.5, 0.4, 0.6]
    d = np.subtract(b, a)
    patterns = np.array([[1 - 2 * ((k >> i) & 1) for i in range(5)] for k in range(32)])
    exact = np.mean(np.abs(patterns @ d) / 5 >= abs(d.mean()) - 1e-12)
    assert significance.approximate_randomization(a, b, resamples=20000, seed=1) == pytest.approx(
        exact, abs=0.01
    )


def test_a_system_against_itself_is_not_significant():
    a = scores(0, 25)
    test = significance.compare_paired(a, a, resamples=100)
    assert test.difference.estimate == 0.0 and test.difference.low == test.difference.high == 0.0
    assert test.p_paired_bootstrap == 1.0 and test.p_approximate_randomization == 1.0


def test_a_clear_difference_gets_the_smallest_p_values():
    a = scores(0, 60)
    b = [x + 0.3 for x in a]
    test = significance.compare_paired(a, b, resamples=199, seed=3)
    assert test.n == 60 and test.difference.estimate == pytest.approx(0.3)
    assert test.difference.low == pytest.approx(0.3) and test.difference.high == pytest.approx(0.3)
    assert test.p_paired_bootstrap == test.p_approximate_randomization == 1 / 200


def test_seeds_and_resamples_change_the_draws_but_not_the_estimate():
    values = scores(2, 30)
    first = significance.bootstrap_interval(values, resamples=100, seed=0)
    assert significance.bootstrap_interval(values, resamples=100, seed=0) == first
    other = significance.bootstrap_interval(values, resamples=100, seed=1)
    assert other.estimate == first.estimate and (other.low, other.high) != (first.low, first.high)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: significance.bootstrap_interval([]), "non-empty"),
        (lambda: significance.bootstrap_interval([0.1, math.nan]), r"values\[1\] is nan"),
        (lambda: significance.bootstrap_interval([0.1], resamples=0), "resamples must be a positive"),
        (lambda: significance.bootstrap_interval([0.1], resamples=1), "at least 40 for a 95% interval"),
        (lambda: significance.bootstrap_interval([0.1], resamples=10**12), "at most 1,000,000"),
        (lambda: significance.bootstrap_interval([0.1], seed=-1), "seed must be an integer from 0"),
        (lambda: significance.approximate_randomization([0.1, 0.2], [0.3, 0.4], seed=True), "seed must"),
        (lambda: significance.paired_bootstrap([0.1], [0.9]), "at least 2 rows, got 1"),
        (lambda: significance.approximate_randomization([0.1], [0.9]), "at least 2 rows, got 1"),
        (lambda: significance.bootstrap_interval([0.1], confidence=95), "confidence must be between"),
        (lambda: significance.paired_bootstrap([0.1, 0.2], [0.1]), "same rows in both systems; got 2 and 1"),
        (lambda: significance.approximate_randomization([0.1, 0.2], [math.inf, 0]), r"b\[0\] is inf"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# The null simulation: two systems whose scores come from one distribution, row-paired, in two
# shapes (independent rows; rows sharing a story effect). At alpha = 0.05 a valid test rejects 5 %
# of them. 1,000 simulations give a binomial standard error of 0.0069: the band is 5 % +- 3.5
# standard errors. sacrebleu's paired-bootstrap p-value rejects 11-15 % here and fails it.
NULL_SIMULATIONS, NULL_ROWS, NULL_RESAMPLES, ALPHA = 1000, 50, 199, 0.05
NULL_BAND = (0.026, 0.074)


def null_systems(rng: np.random.Generator, shared_story: bool) -> tuple[np.ndarray, np.ndarray]:
    if not shared_story:
        return rng.beta(4, 3, NULL_ROWS), rng.beta(4, 3, NULL_ROWS)
    story = rng.beta(2, 2, NULL_ROWS)
    return tuple(np.clip(story + rng.normal(0, 0.1, NULL_ROWS), 0, 1) for _ in range(2))


@pytest.mark.parametrize("shared_story", [False, True], ids=["independent", "shared-story"])
def test_under_the_null_both_tests_reject_at_their_level(shared_story):
    rng = np.random.default_rng(2024)
    bootstrap = randomization = 0
    for trial in range(NULL_SIMULATIONS):
        a, b = null_systems(rng, shared_story)
        bootstrap += significance.paired_bootstrap(a, b, NULL_RESAMPLES, trial)[1] <= ALPHA
        randomization += significance.approximate_randomization(a, b, NULL_RESAMPLES, trial) <= ALPHA
    rates = bootstrap / NULL_SIMULATIONS, randomization / NULL_SIMULATIONS
    assert all(NULL_BAND[0] <= rate <= NULL_BAND[1] for rate in rates), rates


def test_one_row_or_a_few_rows_are_refused_or_named():
    assert significance.few_rows_warning(significance.FEW_ROWS) is None
    assert "read the approximate randomization" in significance.few_rows_warning(5)
    with pytest.raises(ValueError, match="one row cannot show"):
        significance.compare_paired([0.2], [0.9])


def test_both_tests_are_cited():
    assert "Koehn" in citation("koehn-2004-statistical")
    assert "Riezler" in citation("riezler-maxwell-2005-pitfalls")
