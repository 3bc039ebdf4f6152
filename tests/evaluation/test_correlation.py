"""Correlations against SciPy and slow textbook formulas; the Williams test against its definition."""

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from story_quality.evaluation.correlation import compare_metrics, correlate, williams_test

# Fixed vectors with ties on both sides, as human scores (multiples of 1/7) always have.
HUMAN = np.array([0, 1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 3, 1, 0, 6]) / 7
METRIC = np.array([0.1, 0.3, 0.2, 0.5, 0.5, 0.9, 0.4, 0.7, 0.8, 0.6, 0.95, 0.3, 0.3, 0.05, 0.9])


def slow_pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def average_ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def slow_kendall_tau_b(x, y):
    concordant = discordant = ties_x = ties_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / math.sqrt(
        (concordant + discordant + ties_x) * (concordant + discordant + ties_y)
    )


def test_correlations_equal_scipy_and_textbook_formulas():
    result = correlate(METRIC, HUMAN)
    assert result.n == len(HUMAN)
    assert result.pearson == pytest.approx(stats.pearsonr(METRIC, HUMAN).statistic, abs=1e-12)
    assert result.pearson_p == pytest.approx(stats.pearsonr(METRIC, HUMAN).pvalue, rel=1e-9)
    assert result.spearman == pytest.approx(stats.spearmanr(METRIC, HUMAN).statistic, abs=1e-12)
    assert result.spearman_p == pytest.approx(stats.spearmanr(METRIC, HUMAN).pvalue, rel=1e-9)
    assert result.kendall == pytest.approx(stats.kendalltau(METRIC, HUMAN).statistic, abs=1e-12)
    assert result.kendall_p == pytest.approx(stats.kendalltau(METRIC, HUMAN).pvalue, rel=1e-9)
    # Independent of SciPy: the definitions, evaluated the slow way.
    assert result.pearson == pytest.approx(slow_pearson(METRIC, HUMAN), abs=1e-12)
    assert result.spearman == pytest.approx(
        slow_pearson(average_ranks(METRIC), average_ranks(HUMAN)), abs=1e-12
    )
    assert result.kendall == pytest.approx(slow_kendall_tau_b(METRIC, HUMAN), abs=1e-12)


def test_negating_a_metric_negates_every_coefficient():
    plain, negated = correlate(METRIC, HUMAN), correlate(-METRIC, HUMAN)
    for method in ("pearson", "spearman", "kendall"):
        assert negated.coefficient(method) == pytest.approx(-plain.coefficient(method), abs=1e-12)


def test_constant_scores_give_nan_and_bad_shapes_raise():
    result = correlate(np.full(len(HUMAN), 0.5), HUMAN)
    assert math.isnan(result.pearson) and math.isnan(result.spearman) and math.isnan(result.kendall)
    with pytest.raises(ValueError, match="equal-length"):
        correlate(METRIC[:-1], HUMAN)
    with pytest.raises(ValueError, match="at least 3"):
        correlate(METRIC[:2], HUMAN[:2])


def williams_by_definition(x1, x2, x3):
    """Williams (1959) with K as the determinant of the 3x3 correlation matrix (x1 = human)."""
    n = len(x1)
    matrix = np.corrcoef(np.vstack([x1, x2, x3]))
    r12, r13, r23 = matrix[0, 1], matrix[0, 2], matrix[1, 2]
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * np.sqrt(
        (n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * np.linalg.det(matrix) + rbar**2 * (1 - r23) ** 3)
    )
    return t, stats.t.sf(t, n - 3)


def test_williams_matches_its_definition_on_data():
    rng = np.random.default_rng(1)
    human = rng.normal(size=60)
    better = human + rng.normal(scale=0.8, size=60)
    worse = human + rng.normal(scale=2.0, size=60)
    result = compare_metrics(better, worse, human)
    t, p = williams_by_definition(human, better, worse)
    assert result.df == 57
    assert result.t == pytest.approx(t, rel=1e-10)
    assert result.p_value == pytest.approx(p, rel=1e-10)
    assert result.p_value < 0.05


def test_williams_is_antisymmetric_in_the_two_metrics():
    forward = williams_test(0.45, 0.30, 0.6, 120)
    backward = williams_test(0.30, 0.45, 0.6, 120)
    assert backward.t == pytest.approx(-forward.t)
    assert forward.p_value + backward.p_value == pytest.approx(1.0)
    assert williams_test(0.45, 0.30, 0.6, 120, "less").p_value == pytest.approx(backward.p_value)
    two_sided = williams_test(0.30, 0.45, 0.6, 120, "two-sided").p_value
    assert two_sided == pytest.approx(2 * forward.p_value)


def test_williams_equal_correlations_and_monotonicity():
    equal = williams_test(0.4, 0.4, 0.5, 50)
    assert equal.t == 0.0 and equal.p_value == 0.5
    assert williams_test(0.4, 0.4, 0.5, 50, "two-sided").p_value == 1.0
    # A bigger gap, more stories, or more strongly related metrics all make the difference more certain.
    assert williams_test(0.5, 0.3, 0.5, 100).p_value < williams_test(0.45, 0.3, 0.5, 100).p_value
    assert williams_test(0.5, 0.3, 0.5, 400).p_value < williams_test(0.5, 0.3, 0.5, 100).p_value
    assert williams_test(0.5, 0.3, 0.8, 100).p_value < williams_test(0.5, 0.3, 0.2, 100).p_value


def test_williams_has_its_nominal_size_under_the_null_and_power_under_the_alternative():
    rng = np.random.default_rng(7)
    n, simulations = 40, 2000
    rejections_null = rejections_alt = 0
    for _ in range(simulations):
        human = rng.normal(size=n)
        a = human + rng.normal(size=n)
        b = human + rng.normal(size=n)
        c = human + rng.normal(scale=3.0, size=n)
        rejections_null += compare_metrics(a, b, human).p_value < 0.05
        rejections_alt += compare_metrics(a, c, human).p_value < 0.05
    assert 0.03 < rejections_null / simulations < 0.07
    assert rejections_alt / simulations > 0.6


def test_williams_rejects_impossible_input():
    with pytest.raises(ValueError, match="n > 3"):
        williams_test(0.5, 0.3, 0.2, 3)
    with pytest.raises(ValueError, match="r13"):
        williams_test(0.5, 1.3, 0.2, 30)
    with pytest.raises(ValueError, match="cannot all hold"):
        williams_test(0.9, -0.9, 0.9, 30)
    with pytest.raises(ValueError, match="alternative"):
        williams_test(0.5, 0.3, 0.2, 30, "both")
    with pytest.raises(ValueError, match="constant"):
        compare_metrics(np.ones(10), np.arange(10.0), np.arange(10.0))
