"""The meta-evaluation's resampling: what the bootstrap draws, intervals that cover the truth at
about their rate, a permutation test that rejects a true null at about its level, the clustering
of metrics, and the raters' ceiling against a slow reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from story_quality.evaluation import meta_figures, meta_statistics, significance


def test_without_systems_or_groups_items_are_drawn_with_replacement():
    design = meta_statistics.Design(np.arange(50.0))
    draws = list(meta_statistics.resample_indices(design, 30, seed=1))
    assert all(len(index) == 50 and index.min() >= 0 and index.max() < 50 for index in draws)
    assert any(len(set(index.tolist())) < 50 for index in draws)  # repeats happen
    assert [d.tolist() for d in draws] == [
        d.tolist() for d in meta_statistics.resample_indices(design, 30, seed=1)
    ]


def test_with_groups_whole_groups_are_drawn():
    groups = np.repeat(np.arange(6), 4)
    for index in meta_statistics.resample_indices(
        meta_statistics.Design(np.zeros(24), groups=groups), 20, seed=2
    ):
        counts = np.bincount(index, minlength=24).reshape(6, 4)
        assert (counts == counts[:, :1]).all()  # every story of a group drawn as often as the group
        assert counts[:, 0].sum() == 6


def test_with_systems_and_groups_an_item_is_drawn_system_draws_times_group_draws():
    systems, groups = np.repeat(np.arange(4), 5), np.tile(np.arange(5), 4)  # every cell once
    for index in meta_statistics.resample_indices(
        meta_statistics.Design(np.zeros(20), systems, groups), 20, seed=3
    ):
        counts = np.bincount(index, minlength=20).reshape(4, 5).astype(float)
        assert np.linalg.matrix_rank(counts) <= 1  # an outer product: system draws x group draws
        assert counts.sum() in {a * b for a in range(17) for b in range(26)}


@pytest.mark.parametrize(("processes", "pair_memory"), [(1, None), (2, None), (1, 1)])
def test_bootstrap_computes_each_metric_on_the_same_resamples(processes, pair_memory, monkeypatch):
    """Every figure on every resample equals the figure computed on the resample itself, to the last
    bit: the pairwise accuracies counted from pairs sorted once and weighted by the copies, the
    ratings' side kept for the next metric, chunks on one process or two, every metric's sorted
    pairs at once or (too little memory for two) one metric's at a time."""
    if pair_memory is not None:
        monkeypatch.setattr(meta_statistics, "SORTED_PAIRS_BYTES", pair_memory)
    rng = np.random.default_rng(4)
    human = np.round(rng.normal(size=60) * 2)  # ties in the ratings
    metrics = [np.round(human + rng.normal(size=60), 1), rng.normal(size=60), np.ones(60)]
    systems, groups = np.repeat(np.arange(3), 20), np.tile(np.arange(10), 6)
    design = meta_statistics.Design(human, systems, groups)
    names = design.figures
    steps = []
    found = meta_statistics.bootstrap(
        metrics, design, names, 45, seed=5, step=lambda: steps.append(1), processes=processes
    )
    assert len(steps) == 45  # the progress bar moves once a resample
    for trial, index in enumerate(meta_statistics.resample_indices(design, 45, seed=5)):
        for k, metric in enumerate(metrics):
            expected = meta_figures.compute(
                metric[index], human[index], systems[index], groups[index], names, index
            )
            np.testing.assert_array_equal(found[trial, k], expected)


def test_the_permutation_test_is_the_same_on_two_processes():
    rng = np.random.default_rng(9)
    human = np.round(rng.normal(size=40))
    design = meta_statistics.Design(human, np.arange(40) % 4)
    a, b = human + rng.normal(size=40), rng.normal(size=40)
    steps = []
    one = meta_statistics.permutation_test(a, b, design, design.figures, 60, seed=3, processes=1)
    two = meta_statistics.permutation_test(
        a, b, design, design.figures, 60, seed=3, step=lambda: steps.append(1), processes=2
    )
    np.testing.assert_array_equal(one, two)
    assert len(steps) == 60


@pytest.mark.parametrize("with_design", [False, True])
def test_the_pairwise_accuracy_interval_of_constant_scores_holds_its_estimate(with_design):
    """A story drawn twice is no pair of stories: its copies, tied on both sides, must not count as
    agreement, or a constant metric's interval lies above its own estimate."""
    human = np.round(np.random.default_rng(0).normal(size=40) * 10)
    design = (
        meta_statistics.Design(human, np.arange(40) % 4, np.arange(40) // 4)
        if with_design
        else meta_statistics.Design(human)
    )
    names = ["pairwise.accuracy", "pairwise.tie_calibrated"]
    constant = np.ones(40)
    point = meta_figures.compute(constant, human, design.systems, design.groups, names)
    samples = meta_statistics.bootstrap([constant], design, names, 200, seed=0)
    for k in range(len(names)):
        found = meta_statistics.interval_of(float(point[k]), samples[:, 0, k], 0.95)
        assert found.low <= found.estimate <= found.high, names[k]


def test_interval_of_takes_significance_order_statistics_and_drops_undefined_resamples():
    samples = np.r_[np.arange(100.0), [math.nan] * 10]
    estimate = meta_statistics.interval_of(50.0, samples, 0.9)
    assert (estimate.low, estimate.high) == significance.interval_ends(np.arange(100.0), 0.9)
    assert estimate.defined == 100
    mostly_undefined = meta_statistics.interval_of(1.0, np.r_[np.arange(10.0), [math.nan] * 90], 0.9)
    assert math.isnan(mostly_undefined.low) and mostly_undefined.estimate == 1.0


def test_pooled_pearson_intervals_cover_the_true_correlation_at_about_their_rate():
    rho, n, simulations = 0.5, 60, 120
    rng = np.random.default_rng(6)
    covered = 0
    for simulation in range(simulations):
        human = rng.normal(size=n)
        metric = rho * human + math.sqrt(1 - rho**2) * rng.normal(size=n)
        samples = meta_statistics.bootstrap(
            [metric], meta_statistics.Design(human), ["pooled.pearson"], 100, seed=simulation
        )
        estimate = meta_statistics.interval_of(meta_figures.pearson(metric, human), samples[:, 0, 0], 0.95)
        covered += estimate.low <= rho <= estimate.high
    # 95 % nominal; a percentile interval of a correlation runs a little short
    # (benchmarks.meta_evaluate_simulations gives the rate)
    assert 0.85 <= covered / simulations <= 0.99


def test_system_resampling_widens_the_interval_when_systems_differ():
    rng = np.random.default_rng(7)
    systems = np.repeat(np.arange(6), 20)
    effect = rng.normal(size=6)[systems]
    human = effect + rng.normal(size=120)
    metric = effect + rng.normal(size=120)
    names = ["pooled.pearson"]
    items = meta_statistics.bootstrap([metric], meta_statistics.Design(human), names, 300, seed=1)[:, 0, 0]
    both = meta_statistics.bootstrap([metric], meta_statistics.Design(human, systems), names, 300, seed=1)[
        :, 0, 0
    ]
    assert np.std(both) > 1.5 * np.std(items)


def test_the_permutation_test_rejects_a_true_null_at_about_its_level():
    rng = np.random.default_rng(8)
    n, simulations = 40, 150
    rejected = 0
    for simulation in range(simulations):
        human = rng.normal(size=n)
        a, b = human + rng.normal(size=n), human + rng.normal(size=n)  # equally good metrics
        p = meta_statistics.permutation_test(
            a, b, meta_statistics.Design(human), ["pooled.pearson"], 80, seed=simulation
        )[0]
        rejected += p < 0.05
    assert 0.01 <= rejected / simulations <= 0.10  # 0.05 nominal


def test_with_systems_the_parts_swapped_by_system_keep_the_level_where_story_swaps_do_not():
    """Two equally good metrics whose errors are shared inside a system (a style each over-rewards):
    swapping story by story rejects the true null too often; swapping each part by its unit does not."""
    rng = np.random.default_rng(12)
    systems, groups = np.repeat(np.arange(4), 10), np.tile(np.arange(10), 4)
    simulations, with_design, story_by_story = 120, 0, 0
    for simulation in range(simulations):
        human = rng.normal(size=40) + 0.5 * systems
        a = human + rng.normal(size=4)[systems] + rng.normal(size=40)
        b = human + rng.normal(size=4)[systems] + rng.normal(size=40)
        names = ["pooled.pearson"]
        with_design += (
            meta_statistics.permutation_test(
                a, b, meta_statistics.Design(human, systems, groups), names, 60, simulation
            )[0]
            < 0.05
        )
        story_by_story += (
            meta_statistics.permutation_test(a, b, meta_statistics.Design(human), names, 60, simulation)[0]
            < 0.05
        )
    assert with_design / simulations <= 0.10  # 0.05 nominal
    assert story_by_story / simulations >= 0.10  # benchmarks.meta_evaluate_simulations gives the rates


def test_the_permutation_test_finds_a_real_difference_and_none_between_a_metric_and_itself():
    rng = np.random.default_rng(9)
    human = rng.normal(size=80)
    good, poor = human + 0.3 * rng.normal(size=80), human + 3 * rng.normal(size=80)
    names = ["pooled.pearson", "pooled.kendall", "pairwise.tie_calibrated"]
    assert (
        meta_statistics.permutation_test(good, poor, meta_statistics.Design(human), names, 200, seed=0) < 0.01
    ).all()
    np.testing.assert_array_equal(
        meta_statistics.permutation_test(good, good, meta_statistics.Design(human), names, 50, seed=0), 1.0
    )
    # a metric and its rescaled copy are the same metric: standardised first, they cannot differ
    np.testing.assert_array_equal(
        meta_statistics.permutation_test(
            good, 3 * good + 1, meta_statistics.Design(human), names, 50, seed=0
        ),
        1.0,
    )


def test_rank_groups_open_a_group_where_the_leader_is_significantly_better():
    estimates = [0.2, 0.5, 0.45, 0.1]
    p = np.full((4, 4), 1.0)
    p[1, 2] = p[2, 1] = 0.3  # 0.5 and 0.45 not told apart
    p[1, 0] = p[0, 1] = 0.01  # 0.5 above 0.2
    p[0, 3] = p[3, 0] = 0.2  # 0.2 and 0.1 not told apart
    assert meta_statistics.rank_groups(estimates, p, 0.05) == [2, 1, 1, 2]
    p[0, 3] = p[3, 0] = math.nan  # a test that could not be run tells nothing apart
    assert meta_statistics.rank_groups(estimates, p, 0.05) == [2, 1, 1, 3]


def slow_ceiling(raters, method):
    values = []
    for k in range(raters.shape[1]):
        own, others = [], []
        for row in raters:
            rest = [x for j, x in enumerate(row) if j != k and not math.isnan(x)]
            if not math.isnan(row[k]) and rest:
                own.append(row[k])
                others.append(sum(rest) / len(rest))
        values.append({"pearson": stats.pearsonr, "kendall": stats.kendalltau}[method](own, others).statistic)
    return np.mean(values)


def test_the_raters_ceiling_is_each_rater_against_the_others_mean_averaged():
    rng = np.random.default_rng(10)
    quality = rng.normal(size=40)
    raters = np.round(quality[:, None] + rng.normal(size=(40, 5)))
    raters[rng.random((40, 5)) < 0.15] = math.nan  # some ratings missing
    found = meta_statistics.rater_ceiling(
        raters, meta_statistics.Design(np.nanmean(raters, axis=1)), ["pooled.pearson", "pooled.kendall"]
    )
    assert found[0] == pytest.approx(slow_ceiling(raters, "pearson"), abs=1e-12)
    assert found[1] == pytest.approx(slow_ceiling(raters, "kendall"), abs=1e-12)
    samples = meta_statistics.bootstrap_ceiling(
        raters, meta_statistics.Design(np.nanmean(raters, axis=1)), ["pooled.pearson"], 20, seed=3
    )
    first = next(meta_statistics.resample_indices(meta_statistics.Design(np.zeros(40)), 1, seed=3))
    assert samples[0, 0] == pytest.approx(slow_ceiling(raters[first], "pearson"), abs=1e-12)


def test_a_rater_who_rated_nothing_leaves_the_ceiling_to_the_others():
    rng = np.random.default_rng(11)
    quality = rng.normal(size=30)
    raters = np.round(quality[:, None] + rng.normal(size=(30, 3)))
    silent = np.c_[raters, np.full(30, math.nan)]
    design = meta_statistics.Design(
        np.nanmean(raters, axis=1), np.repeat(np.arange(3), 10), np.tile(np.arange(10), 3)
    )
    names = design.figures
    np.testing.assert_allclose(
        meta_statistics.rater_ceiling(silent, design, names),
        meta_statistics.rater_ceiling(raters, design, names),
    )
