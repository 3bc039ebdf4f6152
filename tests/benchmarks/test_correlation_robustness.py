"""The paper's robustness sets: biased sets keep a story with k votes w.p. 1/(|I-k|+1); error types."""

import numpy as np
import pytest

from benchmarks.correlation import evaluate_scores, to_markdown
from benchmarks.correlation.robustness import (
    BIASED_SET_LEVELS,
    BIASED_SET_REPEATS,
    ERROR_TYPE_SET_CODES,
    biased_sets,
    error_type_sets,
    fully_reasonable,
    inclusion_probability,
    reasonable_vote_counts,
    sample_biased_set,
    story_error_types,
)
from story_quality.evaluation.annotations import AnnotatedStories


def test_eight_sets_and_the_inclusion_rule():
    assert BIASED_SET_LEVELS == (1, 2, 3, 4, 5, 6, 7, 8)
    assert BIASED_SET_REPEATS >= 2
    k = np.arange(8)
    np.testing.assert_allclose(
        inclusion_probability(1, k), [1 / 2, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7]
    )
    np.testing.assert_allclose(
        inclusion_probability(8, k), [1 / 9, 1 / 8, 1 / 7, 1 / 6, 1 / 5, 1 / 4, 1 / 3, 1 / 2]
    )
    np.testing.assert_array_equal(reasonable_vote_counts(np.array([[1, 0, 1], [0, 0, 0]])), [2, 0])


def test_empirical_keep_rate_approaches_one_over_distance_plus_one():
    counts = np.repeat(np.arange(8), 4)  # four stories for every k = 0..7
    draws = 3000
    for level in BIASED_SET_LEVELS:
        rng = np.random.default_rng(100 + level)
        kept = np.zeros(len(counts))
        for _ in range(draws):
            draw = sample_biased_set(counts, level, rng)
            assert np.all(np.diff(draw) > 0)  # sorted, no story twice
            kept[draw] += 1
        rate = kept / draws
        expected = 1 / (np.abs(level - counts) + 1)
        sigma = np.sqrt(expected * (1 - expected) / draws)
        assert np.all(np.abs(rate - expected) <= 5 * sigma + 1e-12)
        # A story whose vote count equals the set's index is in every draw.
        assert np.all(rate[counts == level] == 1.0)
        assert np.all(rate[counts != level] < 1.0)


def test_sets_lean_towards_their_index():
    counts = np.repeat(np.arange(8), 50)
    sets = biased_sets(counts, repeats=5, seed=3)
    mean_k = [np.mean([counts[draw].mean() for draw in s.draws]) for s in sets]
    assert [s.level for s in sets] == list(BIASED_SET_LEVELS)
    assert all(len(s.draws) == 5 for s in sets)
    assert mean_k[0] < mean_k[3] < mean_k[6]


def test_sampling_is_seeded_and_each_set_has_its_own_stream():
    counts = np.repeat(np.arange(8), 10)
    first = biased_sets(counts, levels=(2, 5), repeats=3, seed=1)
    again = biased_sets(counts, levels=(2, 5), repeats=3, seed=1)
    other = biased_sets(counts, levels=(2, 5), repeats=3, seed=2)
    only_first = biased_sets(counts, levels=(2,), repeats=3, seed=1)
    assert all(
        np.array_equal(a, b)
        for s, t in zip(first, again, strict=True)
        for a, b in zip(s.draws, t.draws, strict=True)
    )
    assert not np.array_equal(first[0].draws[0], other[0].draws[0])
    assert all(np.array_equal(a, b) for a, b in zip(first[0].draws, only_first[0].draws, strict=True))
    # The repeats of one set are different draws.
    assert not all(np.array_equal(first[0].draws[0], d) for d in first[0].draws[1:])


def test_bad_sampler_input_is_refused():
    counts = np.array([0, 3, 7])
    with pytest.raises(ValueError, match="repeats"):
        biased_sets(counts, repeats=0)
    with pytest.raises(ValueError, match="distinct"):
        biased_sets(counts, levels=(1, 1))
    with pytest.raises(ValueError, match="non-negative integers"):
        sample_biased_set(np.array([0.5, 2.0]), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="non-negative integers"):
        sample_biased_set(np.array([-1, 2]), 1, np.random.default_rng(0))


def test_error_type_needs_three_annotators_with_the_same_code():
    codes = np.array(
        [
            [0, 0, 0, 0, 0, 0, 0],  # reasonable for everybody: no type
            [1, 1, 1, 2, 0, 0, 0],  # three say repetition
            [1, 1, 2, 2, 3, 3, 5],  # nobody's code reaches three: no type
            [2, 2, 2, 3, 3, 3, 0],  # three and three: both types
            [4, 4, 4, 4, 4, 4, 4],  # all seven
            [5, 5, 5, 0, 0, 0, 0],  # "other" is a type too (the paper's table just leaves it out)
        ]
    )
    assert story_error_types(codes) == [
        frozenset(),
        frozenset({1}),
        frozenset(),
        frozenset({2, 3}),
        frozenset({4}),
        frozenset({5}),
    ]
    assert story_error_types(codes, min_annotators=2)[2] == frozenset({1, 2, 3})
    with pytest.raises(ValueError, match="min_annotators"):
        story_error_types(codes, min_annotators=0)


def test_reasonable_means_all_seven_votes():
    votes = np.array([[1] * 7, [1, 1, 1, 1, 1, 1, 0], [0] * 7])
    np.testing.assert_array_equal(fully_reasonable(votes), [True, False, False])


def story_row(type_votes):
    """Votes and codes of one story: ``type_votes`` maps an error code to its number of annotators."""
    codes = [code for code, count in type_votes.items() for _ in range(count)]
    codes += [0] * (7 - len(codes))
    codes = np.array(codes)
    return (codes == 0).astype(int), codes


def known_sizes_corpus():
    """19 fully reasonable stories; 24 / 38 / 61 / 23 stories of types 1..4 (7 of them with two types)."""
    rows = []
    rows += [story_row({})] * 19  # reasonable: all seven votes
    rows += [story_row({1: 3})] * 20  # repetition only
    rows += [story_row({1: 3, 2: 3})] * 4  # repetition and poor coherence
    rows += [story_row({2: 3})] * 31  # poor coherence only
    rows += [story_row({2: 4, 3: 3})] * 3  # poor coherence and conflicting logic
    rows += [story_row({3: 5})] * 58  # conflicting logic only
    rows += [story_row({4: 7})] * 20  # chaotic scene only
    rows += [story_row({4: 3, 5: 3})] * 3  # chaotic scene and "other"
    # Stories in no set: six reasonable votes, two annotators per code, or "other" only.
    rows += [story_row({3: 1})] * 5
    rows += [story_row({1: 2, 2: 2, 3: 2})] * 6
    rows += [story_row({5: 4})] * 2
    votes = np.array([v for v, _ in rows])
    codes = np.array([c for _, c in rows])
    ids = tuple(str(i) for i in range(len(rows)))
    return AnnotatedStories(ids, tuple(f"story {i} ." for i in ids), votes, codes)


def test_error_type_set_sizes_on_a_known_fixture():
    stories = known_sizes_corpus()
    sets = error_type_sets(stories)
    assert [s.code for s in sets] == list(ERROR_TYPE_SET_CODES) == [1, 2, 3, 4]
    assert [s.name for s in sets] == ["repeated plot", "poor coherence", "conflicting logic", "chaotic scene"]
    assert [s.n_reasonable for s in sets] == [19] * 4
    assert [s.n_with_error for s in sets] == [24, 38, 61, 23]
    assert [len(s.indices) for s in sets] == [43, 57, 80, 42]
    reasonable = np.arange(19)
    for subset in sets:
        assert np.array_equal(subset.indices[:19], reasonable)
        assert np.all(np.diff(subset.indices) > 0)
    # The four stories with repetition and poor coherence are in both sets.
    both = np.arange(39, 43)
    assert np.isin(both, sets[0].indices).all() and np.isin(both, sets[1].indices).all()
    (other,) = error_type_sets(stories, codes=(5,))
    assert (other.name, other.n_with_error, len(other.indices)) == ("other", 5, 24)


def test_error_type_sets_refuse_missing_codes_or_unknown_types():
    stories = known_sizes_corpus()
    with pytest.raises(ValueError, match="error-code file"):
        error_type_sets(AnnotatedStories(stories.ids, stories.stories, stories.votes))
    with pytest.raises(ValueError, match=r"unknown error codes \[0, 9\]"):
        error_type_sets(stories, codes=(0, 1, 9))


def test_report_prints_the_set_sizes_and_uses_paired_draws():
    stories = known_sizes_corpus()
    human = stories.human_scores
    scores = human + np.random.default_rng(0).normal(scale=0.2, size=len(human))
    report = evaluate_scores(stories, {"mine": scores}, biased_repeats=4, seed=7)
    assert [(e.n_reasonable, e.n_with_error, e.n) for e in report.error_types] == [
        (19, 24, 43),
        (19, 38, 57),
        (19, 61, 80),
        (19, 23, 42),
    ]
    assert [b.level for b in report.biased] == list(BIASED_SET_LEVELS)
    draws = biased_sets(reasonable_vote_counts(stories.votes), repeats=4, seed=7)
    for result, biased in zip(report.biased, draws, strict=True):
        assert result.sizes == tuple(len(d) for d in biased.draws)
        usable = [d for d in biased.draws if len(d) >= 3 and np.ptp(human[d]) > 0]
        assert result.usable == len(usable)
        if usable:
            by_hand = np.mean([np.corrcoef(scores[d], human[d])[0, 1] for d in usable])
            assert result.mean["mine"]["pearson"] == pytest.approx(by_hand)
    markdown = to_markdown(report)
    assert (
        "Sets: 19 reasonable stories + repeated plot 24 / poor coherence 38 / conflicting logic 61 / "
        "chaotic scene 23 stories with the error." in markdown
    )
    assert "repeated plot (19 + 24 = 43)" in markdown and "chaotic scene (19 + 23 = 42)" in markdown
    assert "| I = 1 |" in markdown and "stories per draw" in markdown
