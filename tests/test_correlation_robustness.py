"""The biased-set sampler keeps the documented proportions and draws uniformly; error-type sets."""

import numpy as np
import pytest

from benchmarks.correlation.evaluation import largest_feasible_size
from benchmarks.correlation.robustness import (
    BIASED_REASONABLE_FRACTIONS,
    BIASED_SET_SIZE,
    biased_sets,
    error_type_sets,
    sample_biased_set,
    story_error_types,
)
from training.annotations import AnnotatedStories


def reasonable_flags(n_reasonable, n_unreasonable, seed=0):
    flags = np.array([True] * n_reasonable + [False] * n_unreasonable)
    return np.random.default_rng(seed).permutation(flags)


def test_eight_sets_from_ten_to_eighty_percent_reasonable():
    assert BIASED_REASONABLE_FRACTIONS == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])


def test_each_draw_has_exactly_the_documented_composition():
    # The ROC annotation set's split: 176 reasonable (majority vote), 224 not.
    flags = reasonable_flags(176, 224)
    assert largest_feasible_size(flags, BIASED_REASONABLE_FRACTIONS) == BIASED_SET_SIZE
    sets = biased_sets(flags, repeats=3, seed=5)
    assert [s.reasonable_fraction for s in sets] == list(BIASED_REASONABLE_FRACTIONS)
    for biased in sets:
        for draw in biased.draws:
            assert len(draw) == BIASED_SET_SIZE == len(set(draw.tolist()))
            assert draw.min() >= 0 and draw.max() < len(flags)
            assert flags[draw].sum() == round(biased.reasonable_fraction * BIASED_SET_SIZE)


def test_stories_of_a_group_are_equally_likely():
    flags = reasonable_flags(12, 18, seed=3)
    rng = np.random.default_rng(11)
    draws = 4000
    counts = np.zeros(len(flags))
    for _ in range(draws):
        counts[sample_biased_set(flags, 0.3, 10, rng)] += 1
    frequency = counts / draws
    # 3 of 12 reasonable stories (p = 0.25), 7 of 18 unreasonable ones (p = 7/18) per draw.
    for expected, group in ((3 / 12, flags), (7 / 18, ~flags)):
        sigma = np.sqrt(expected * (1 - expected) / draws)
        assert np.all(np.abs(frequency[group] - expected) < 5 * sigma)


def test_sampling_is_seeded_and_each_set_has_its_own_stream():
    flags = reasonable_flags(40, 60)
    first = biased_sets(flags, fractions=(0.2, 0.5), size=40, repeats=2, seed=1)
    again = biased_sets(flags, fractions=(0.2, 0.5), size=40, repeats=2, seed=1)
    other = biased_sets(flags, fractions=(0.2, 0.5), size=40, repeats=2, seed=2)
    only_second = biased_sets(flags, fractions=(0.2,), size=40, repeats=2, seed=1)
    assert all(
        np.array_equal(a, b)
        for s, t in zip(first, again, strict=True)
        for a, b in zip(s.draws, t.draws, strict=True)
    )
    assert not np.array_equal(first[0].draws[0], other[0].draws[0])
    assert np.array_equal(first[0].draws[0], only_second[0].draws[0])


def test_impossible_sets_are_refused_with_the_counts():
    flags = reasonable_flags(5, 50)
    with pytest.raises(ValueError, match="needs 8 reasonable .* only 5"):
        sample_biased_set(flags, 0.8, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="repeats"):
        biased_sets(flags, repeats=0)
    assert largest_feasible_size(flags, (0.1, 0.8)) == 6


def test_story_error_type_is_the_most_frequent_code_with_ties_kept():
    codes = np.array(
        [
            [0, 0, 0, 0, 0, 0, 0],  # reasonable for everybody
            [1, 1, 1, 2, 0, 0, 0],  # repetition dominates
            [2, 3, 2, 3, 0, 5, 0],  # tie between incoherence and conflicting logic
        ]
    )
    assert story_error_types(codes) == [frozenset(), frozenset({1}), frozenset({2, 3})]


def test_error_type_sets_hold_reasonable_stories_plus_that_error():
    votes = np.array([[1] * 7, [1, 1, 1, 1, 0, 0, 0], [0] * 7, [0, 0, 0, 0, 0, 1, 1], [0] * 7])
    codes = np.array(
        [
            [0] * 7,
            [0, 0, 0, 0, 3, 3, 1],  # reasonable by majority, despite some error codes
            [1, 1, 1, 1, 2, 2, 2],  # repetition
            [2, 2, 3, 3, 4, 0, 0],  # tie: incoherence and conflicting logic
            [4, 4, 4, 4, 4, 4, 4],  # chaotic scene
        ]
    )
    stories = AnnotatedStories(tuple("abcde"), tuple("story " + c for c in "abcde"), votes, codes)
    sets = {s.name: s for s in error_type_sets(stories)}
    assert sets["repeated plot"].indices.tolist() == [0, 1, 2] and sets["repeated plot"].n_with_error == 1
    assert sets["poor coherence"].indices.tolist() == [0, 1, 3]
    assert sets["conflicting logic"].indices.tolist() == [0, 1, 3]
    assert sets["chaotic scene"].indices.tolist() == [0, 1, 4]
    assert sets["other"].indices.tolist() == [0, 1] and sets["other"].n_with_error == 0
    with pytest.raises(ValueError, match="error-code file"):
        error_type_sets(AnnotatedStories(tuple("abcde"), tuple("abcde"), votes))
