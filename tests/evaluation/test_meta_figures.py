"""Every meta-evaluation figure against a slow reference written here (SciPy where it has one)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from story_quality.evaluation import meta_figures


def design(seed: int = 0, systems: int = 4, groups: int = 6, drop: int = 5):
    """An unbalanced story set: every (system, group) cell once, some cells dropped, ties on both sides."""
    rng = np.random.default_rng(seed)
    cells = [(s, g) for s in range(systems) for g in range(groups)]
    keep = sorted(rng.choice(len(cells), len(cells) - drop, replace=False))
    system = np.array([cells[k][0] for k in keep])
    group = np.array([cells[k][1] for k in keep])
    quality = 0.4 * system + 0.3 * group + rng.normal(size=len(keep))
    human = np.round(quality + rng.normal(0, 0.5, len(keep)))  # integer ratings: many ties
    metric = np.round(quality + rng.normal(0, 0.8, len(keep)), 1)  # one decimal: some ties
    return metric, human, system, group


def scipy_correlation(method: str, x, y) -> float:
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    if len(set(x)) < 2 or len(set(y)) < 2 or len(x) < 3:
        return math.nan
    return float(function(x, y).statistic)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_pooled_correlations_equal_scipy(method):
    metric, human, system, group = design()
    found = meta_figures.compute(metric, human, system, group, [f"pooled.{method}"])[0]
    assert found == pytest.approx(scipy_correlation(method, metric, human), abs=1e-12)


def test_kendall_counted_pair_by_pair_equals_scipy_above_the_pair_limit(monkeypatch):
    metric, human, *_ = design(1)
    by_pairs = meta_figures.kendall(metric, human)
    monkeypatch.setattr(meta_figures, "PAIRS_AT_ONCE", 0)
    monkeypatch.setattr(meta_figures, "PAIRS_COUNTED", 0)
    assert meta_figures.kendall(metric, human) == pytest.approx(by_pairs, abs=1e-12)
    assert by_pairs == pytest.approx(stats.kendalltau(metric, human).statistic, abs=1e-12)


@pytest.mark.parametrize("n", [142, 220, 350])
def test_kendall_from_the_pairs_counts_is_scipys_to_the_last_bit_where_it_is_counted_here(n):
    rng = np.random.default_rng(n)
    metric, human = np.round(rng.normal(size=n), 1), np.round(rng.normal(size=n))  # ties on both sides
    assert n * (n - 1) // 2 > meta_figures.PAIRS_AT_ONCE
    assert meta_figures.kendall(metric, human) == float(stats.kendalltau(metric, human).statistic)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_within_system_is_the_mean_of_each_systems_correlation(method):
    metric, human, system, group = design(2)
    human[system == 3] = 2.0  # one system's ratings constant: its correlation is undefined, left out
    per_system = [scipy_correlation(method, metric[system == s], human[system == s]) for s in range(4)]
    expected = np.mean([value for value in per_system if not math.isnan(value)])
    assert math.isnan(per_system[3])
    found = meta_figures.compute(metric, human, system, group, [f"within_system.{method}"])[0]
    assert found == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_system_level_correlates_the_systems_means(method):
    metric, human, system, group = design(3, systems=5)
    names = sorted(set(system.tolist()))
    metric_means = [sum(m for m, s in zip(metric, system, strict=True) if s == name) / list(system).count(name)
                    for name in names]  # fmt: skip
    human_means = [sum(h for h, s in zip(human, system, strict=True) if s == name) / list(system).count(name)
                   for name in names]  # fmt: skip
    found = meta_figures.compute(metric, human, system, group, [f"system.{method}"])[0]
    assert found == pytest.approx(scipy_correlation(method, metric_means, human_means), abs=1e-12)


def test_system_level_needs_three_systems():
    metric, human, system, group = design(3, systems=2, drop=0)
    assert math.isnan(meta_figures.compute(metric, human, system, group, ["system.pearson"])[0])


def test_group_kendall_averages_scipy_tau_b_over_the_groups_where_it_is_defined():
    metric, human, system, group = design(4, groups=8)
    human[group == 0] = 1.0  # undefined in group 0
    taus = []
    for g in range(8):
        x, y = metric[group == g], human[group == g]
        if len(x) >= 2 and len(set(x)) > 1 and len(set(y)) > 1:
            taus.append(stats.kendalltau(x, y).statistic)
    found = meta_figures.compute(metric, human, system, group, ["group.kendall"])[0]
    assert found == pytest.approx(np.mean(taus), abs=1e-12)


def dummy_residuals(values, factors):
    """Least-squares residuals on an intercept and one indicator per level (first level dropped)."""
    columns = [np.ones(len(values))]
    for codes in factors:
        columns += [(codes == level).astype(float) for level in sorted(set(codes.tolist()))[1:]]
    matrix = np.column_stack(columns)
    coefficients, *_ = np.linalg.lstsq(matrix, values, rcond=None)
    return values - matrix @ coefficients


@pytest.mark.parametrize("which", ["both", "systems", "groups"])
def test_residual_pearson_equals_the_fixed_effects_residuals_by_least_squares(which):
    metric, human, system, group = design(5, drop=7)
    systems = system if which != "groups" else None
    groups = group if which != "systems" else None
    factors = [codes for codes in (systems, groups) if codes is not None]
    expected = stats.pearsonr(dummy_residuals(metric, factors), dummy_residuals(human, factors)).statistic
    found = meta_figures.compute(metric, human, systems, groups, ["residual.pearson"])[0]
    assert found == pytest.approx(expected, abs=1e-9)


def test_residual_pearson_is_undefined_when_the_factors_explain_everything():
    system = np.array([0, 0, 1, 1, 2, 2])
    human = system * 1.0
    assert math.isnan(meta_figures.compute(np.arange(6.0), human, system, None, ["residual.pearson"])[0])


def slow_accuracy(metric, human, epsilon):
    """acc23 by the definition: a pair is right when both order it alike, or both tie it."""
    right = total = 0
    for i, j in itertools.combinations(range(len(metric)), 2):
        metric_tie = abs(metric[i] - metric[j]) <= epsilon
        human_tie = human[i] == human[j]
        if metric_tie or human_tie:
            right += metric_tie and human_tie
        else:
            right += (metric[i] > metric[j]) == (human[i] > human[j])
        total += 1
    return right / total


def test_pairwise_accuracy_raw_counts_exact_ties_only():
    metric, human, *_ = design(6)
    assert meta_figures.pairwise_accuracy(metric, human) == pytest.approx(slow_accuracy(metric, human, 0.0))


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_tie_calibration_finds_the_best_epsilon_of_every_candidate(seed):
    metric, human, *_ = design(seed)
    metric = metric + np.random.default_rng(seed).normal(0, 0.01, len(metric))  # few exact ties
    candidates = sorted({0.0} | {abs(a - b) for a, b in itertools.combinations(metric, 2)})
    accuracies = [slow_accuracy(metric, human, epsilon) for epsilon in candidates]
    best = max(accuracies)
    assert meta_figures.tie_calibrated_accuracy(metric, human) == pytest.approx(best)
    assert meta_figures.tie_epsilon(metric, human) == pytest.approx(candidates[accuracies.index(best)])
    assert best >= meta_figures.pairwise_accuracy(metric, human)


def test_the_pairs_inside_groups_are_every_pair_sharing_a_code_once():
    codes = np.array([2, 0, 2, 1, 0, 2, 5])
    first, second = meta_figures.pair_indices(codes, len(codes))
    found = sorted(tuple(sorted(pair)) for pair in zip(first.tolist(), second.tolist(), strict=True))
    expected = sorted((i, j) for i, j in itertools.combinations(range(7), 2) if codes[i] == codes[j])
    assert found == expected


def test_constant_or_tiny_inputs_give_nan_not_an_error():
    human = np.array([1.0, 2.0, 3.0, 4.0])
    for name in ("pooled.pearson", "pooled.spearman", "pooled.kendall"):
        assert math.isnan(meta_figures.compute(np.ones(4), human, None, None, [name])[0])
        assert math.isnan(meta_figures.compute(np.ones(2), human[:2], None, None, [name])[0])


@pytest.mark.parametrize("scale", [1e155, 1e-200, 1e9, 1e-9])
def test_every_figure_is_the_same_on_scores_or_ratings_scaled_by_any_factor(scale):
    """A correlation does not depend on the scale: no product of scaled values may overflow or vanish."""
    metric, human, system, group = design(5, drop=7)
    names = meta_figures.available_figures(True, True)
    expected = meta_figures.compute(metric, human, system, group, names)
    assert np.isfinite(expected).all()
    for found in (
        meta_figures.compute(metric * scale, human, system, group, names),
        meta_figures.compute(metric, human * scale, system, group, names),
    ):
        np.testing.assert_allclose(found, expected, rtol=0, atol=1e-9)


def test_baselines_length_distinct_trigrams_and_oracles():
    texts = ["a b c a b c", "one two", "x y z w", "the cat the cat the cat", "The cat the cat"]
    assert meta_figures.length_scores(texts).tolist() == [len(text.split()) for text in texts]

    def slow_ratio(text):
        words = text.split()
        grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
        return len(Counter(grams)) / len(grams) if grams else 1.0

    assert meta_figures.distinct_trigram_scores(texts).tolist() == pytest.approx(
        [slow_ratio(t) for t in texts]
    )
    assert slow_ratio(texts[0]) == 0.75
    human = np.array([1.0, 2.0, 4.0, 5.0, 9.0])
    codes = np.array([0, 0, 1, 1, 1])
    assert meta_figures.mean_oracle(human, codes).tolist() == pytest.approx([1.5, 1.5, 6.0, 6.0, 6.0])


def test_available_figures_follow_what_the_data_carries():
    plain = meta_figures.available_figures(False, False)
    assert plain == ["pooled.pearson", "pooled.spearman", "pooled.kendall", "pairwise.accuracy",
                     "pairwise.tie_calibrated"]  # fmt: skip
    assert "group.kendall" in meta_figures.available_figures(False, True)
    assert "within_system.kendall" not in meta_figures.available_figures(False, True)
    assert set(meta_figures.available_figures(True, True)) == set(meta_figures.FIGURES)
    assert set(meta_figures.FIGURE_LABELS) == set(meta_figures.FIGURES)


def test_average_ranks_equal_scipy_rankdata():
    values = np.array([3.0, 1.0, 3.0, 2.0, 3.0, -1.0, 2.0])
    np.testing.assert_array_equal(meta_figures.average_ranks(values), stats.rankdata(values))


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_tie_calibration_sorts_only_the_pairs_that_can_hold_the_best_and_finds_it(seed):
    """Ratings with many ties and scores on a decimal grid (differences apart by rounding only):
    the accuracy and epsilon equal the slow definition's best over every candidate, exactly."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 4, size=25).astype(float)
    metric = np.round(0.1 * human + rng.normal(0, 0.2, 25), 1)
    # Differences apart by rounding only are one candidate: 0.3 - 0.2 and 0.4 - 0.3 tie alike.
    candidates = sorted({0.0} | {round(abs(a - b), 9) for a, b in itertools.combinations(metric, 2)})
    accuracies = [slow_accuracy(metric, human, epsilon + 1e-9) for epsilon in candidates]
    best = max(accuracies)
    raw, calibrated, epsilon = meta_figures.pairwise_accuracies(metric, human)
    assert calibrated == best
    assert raw == slow_accuracy(metric, human, 0.0)
    assert epsilon == pytest.approx(candidates[accuracies.index(best)], abs=1e-9)


@pytest.mark.parametrize("seed", [13, 14])
def test_no_epsilon_from_where_the_sort_stops_beats_epsilon_zero(seed):
    """The sort stops at the smallest size where more alike pairs lie at or below than there are
    tied pairs: from there on, a metric tie costs more than the ties can give back."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=40).astype(float)
    metric = human + rng.normal(0, 1.5, 40)
    first, second = np.triu_indices(40, 1)
    difference, human_sign = metric[first] - metric[second], np.sign(human[first] - human[second])
    size, tied = np.abs(difference), human_sign == 0
    alike = (np.sign(difference) == human_sign) & ~tied
    bound = meta_figures._no_better_beyond(size, tied, alike)
    assert np.count_nonzero(alike & (size <= bound)) > np.count_nonzero(tied)
    assert np.count_nonzero(alike & (size < bound)) <= np.count_nonzero(tied)
    assert slow_accuracy(metric, human, bound) < slow_accuracy(metric, human, 0.0)
