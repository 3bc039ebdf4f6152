"""UNION's negative-sampling recipe, with the paper's numbers written out (its technique table).

* number of techniques n in {1, 2, 3, 4} with p = {.5, .2, .2, .1};
* techniques {repetition, substitution, reordering, negation} with p = {.1, .3, .4, .2};
* repetition: 70 % sentence level (one later sentence over ``1 + L // 2`` others), 30 % n-gram
  level (``L // 2`` times an n-gram, n in 1..4, doubled in place);
* substitution: 50 % sentence level (k in 1..L-1 sentences), 50 % word level;
* reordering: k in 2..L-1 later sentences; negation: k in 1..L-1 later sentences;

where L counts every sentence, the leading context included. ``random()`` is scripted just
below and just above each threshold, so a changed number changes the outcome; stories of 3, 4,
6 and 7 sentences show where L enters (every other test story has 5).
"""

from __future__ import annotations

import pytest
from corruption_helpers import ListDonors, ScriptedRandom, as_story, text_of

from story_quality.training.negatives.corruptions import (
    CorruptionContext,
    KeywordTable,
    StoryRandom,
    corrupt,
    draw_techniques,
    negate_sentences,
    reorder,
    repeat,
    substitute,
)
from story_quality.training.negatives.lexicon import Lexicon

SEVEN = [
    "ken went to the park .",
    "he saw a big dog .",
    "the dog was happy .",
    "he threw a ball .",
    "the ball was red .",
    "they played all day .",
    "he was tired .",
]
DONOR = [
    "[FEMALE] baked a cake .",
    "she burned it .",
    "her oven was too hot .",
    "she bought a new oven .",
    "the next cake was perfect .",
    "her family ate it .",
    "they were happy .",
]
JUST_BELOW, JUST_ABOVE = -1e-3, 1e-3


@pytest.fixture(scope="module")
def lexicon():
    return Lexicon(tagger="heuristic", wordnet="none", antonyms={"happy": ["sad"]}).resolve()


def context(lexicon, story):
    return CorruptionContext(
        lexicon=lexicon,
        keywords=KeywordTable.from_counts({("NN", "cat"): 3, ("JJ", "small"): 2}),
        donors=ListDonors([(0, story), (1, as_story(lexicon, DONOR))]),
        story_index=0,
    )


# --- the two draws of techniques ------------------------------------------------------------------

# n: cumulative .5 / .7 / .9 / 1
COUNT_THRESHOLDS = [(0.5, 1, 2), (0.7, 2, 3), (0.9, 3, 4)]


@pytest.mark.parametrize(("threshold", "below", "above"), COUNT_THRESHOLDS)
def test_number_of_techniques_switches_at_the_papers_cumulative_probabilities(threshold, below, above):
    # after the count, 0.0 picks the first remaining technique each time (no weight is 0)
    for offset, n in ((JUST_BELOW, below), (JUST_ABOVE, above)):
        drawn = draw_techniques(ScriptedRandom([threshold + offset] + [0.0] * n))
        assert len(drawn) == n and len(set(drawn)) == n


# first technique: cumulative .1 / .4 / .8 / 1 over repetition, substitution, reordering, negation
TECHNIQUE_THRESHOLDS = [(0.1, "repetition", "substitution"), (0.4, "substitution", "reordering")]
TECHNIQUE_THRESHOLDS += [(0.8, "reordering", "negation")]


@pytest.mark.parametrize(("threshold", "below", "above"), TECHNIQUE_THRESHOLDS)
def test_first_technique_switches_at_the_papers_cumulative_probabilities(threshold, below, above):
    # 0.0: one technique; then the technique draw on either side of the threshold
    assert draw_techniques(ScriptedRandom([0.0, threshold + JUST_BELOW])) == [below]
    assert draw_techniques(ScriptedRandom([0.0, threshold + JUST_ABOVE])) == [above]


def test_second_technique_is_drawn_from_the_remaining_weights():
    # n = 2 (.6); reordering (.5 of 1: bins .1 .4 .8); left: repetition .1, substitution .3,
    # negation .2 (total .6): substitution below .4 / .6 = .6667, negation above it.
    assert draw_techniques(ScriptedRandom([0.6, 0.5, 0.4 / 0.6 + JUST_BELOW])) == [
        "reordering",
        "substitution",
    ]
    assert draw_techniques(ScriptedRandom([0.6, 0.5, 0.4 / 0.6 + JUST_ABOVE])) == ["reordering", "negation"]


# --- the variants' shares -------------------------------------------------------------------------


@pytest.mark.parametrize(("first", "variant"), [(0.7 + JUST_BELOW, "sentence"), (0.7 + JUST_ABOVE, "ngram")])
def test_repetition_is_sentence_level_70_percent_of_the_time(lexicon, first, variant):
    story = as_story(lexicon, SEVEN[:5])
    _, name = repeat(story, ScriptedRandom([first] + [0.0] * 10), context(lexicon, story))
    assert name == f"repetition:{variant}"


def test_substitution_is_sentence_level_half_of_the_time(lexicon):
    story = as_story(lexicon, SEVEN[:5])
    # sentence level: k = 1, donor row int(.6 * 2) = 1, target sentence 1, donor sentence 1
    rng = ScriptedRandom([0.5 + JUST_BELOW, 0.0, 0.6, 0.0, 0.0])
    corrupted, name = substitute(story, rng, context(lexicon, story))
    assert name == "substitution:sentence" and text_of(corrupted)[1] == DONOR[1]
    # word level: keywords saw big dog | dog happy | threw ball | ball red, m = 1,
    # pick int(.5 * 9) = 4 -> "happy" -> its antonym "sad"
    rng = ScriptedRandom([0.5 + JUST_ABOVE, 0.0, 0.5, 0.0])
    corrupted, name = substitute(story, rng, context(lexicon, story))
    assert name == "substitution:word" and text_of(corrupted)[2] == "the dog was sad ."


@pytest.mark.parametrize(("draw", "n"), [(0.0, 1), (0.25 + JUST_BELOW, 1), (0.25 + JUST_ABOVE, 2), (0.99, 4)])
def test_ngram_length_is_uniform_in_one_to_four(lexicon, draw, n):
    # 5 sentences: 5 // 2 = 2 duplications, both of the n-gram opening sentence 1 ("he saw a big dog .")
    story = as_story(lexicon, SEVEN[:5])
    rng = ScriptedRandom([0.9] + [0.0, draw, 0.0] * 2)
    corrupted, _ = repeat(story, rng, context(lexicon, story))
    words = SEVEN[1].split()
    assert text_of(corrupted)[1] == " ".join(words[:n] * 3 + words[n:])
    assert rng.unused == 0


# --- stories of other lengths than 5 --------------------------------------------------------------

LENGTHS = [3, 4, 6, 7]


@pytest.mark.parametrize(("length", "copies"), [(3, 1), (4, 2), (6, 4), (7, 4)])
def test_sentence_repetition_copies_over_one_plus_half_of_all_sentences(lexicon, length, copies):
    # 1 + L // 2 targets among the L - 2 other later sentences: L=3: min(2, 1); L=4: min(3, 2);
    # L=6: min(4, 4); L=7: min(4, 5). Source int(0 * (L-1)) = sentence 1; Fisher-Yates draws of 0
    # keep the order, so sentences 2 .. 1 + copies become sentence 1.
    story = as_story(lexicon, SEVEN[:length])
    rng = ScriptedRandom([0.0, 0.0] + [0.0] * copies)
    corrupted, name = repeat(story, rng, context(lexicon, story))
    assert name == "repetition:sentence"
    assert text_of(corrupted) == [SEVEN[0]] + [SEVEN[1]] * (1 + copies) + SEVEN[2 + copies : length]
    assert rng.unused == 0


@pytest.mark.parametrize(("length", "times"), [(3, 1), (4, 2), (6, 3), (7, 3)])
def test_ngram_repetition_happens_half_the_number_of_sentences_times(lexicon, length, times):
    # L // 2 duplications, each of the first word of sentence 1 (candidate 0, n = 1, start 0)
    story = as_story(lexicon, SEVEN[:length])
    rng = ScriptedRandom([0.9] + [0.0, 0.0, 0.0] * times)
    corrupted, name = repeat(story, rng, context(lexicon, story))
    assert name == "repetition:ngram"
    assert text_of(corrupted)[1] == " ".join(["he"] * (1 + times) + SEVEN[1].split()[1:])
    assert text_of(corrupted)[2:] == SEVEN[2:length]
    assert rng.unused == 0


@pytest.mark.parametrize("length", LENGTHS)
def test_sentence_substitution_can_replace_every_later_sentence(lexicon, length):
    # k = 1 + int(.999 * (L-1)) = L-1; donor row int(.6 * 2) = 1; both samples keep their order
    story = as_story(lexicon, SEVEN[:length])
    rng = ScriptedRandom([0.0, 0.999, 0.6] + [0.0] * 2 * (length - 1))
    corrupted, name = substitute(story, rng, context(lexicon, story))
    assert name == "substitution:sentence"
    assert text_of(corrupted) == [SEVEN[0]] + DONOR[1:length]
    assert rng.unused == 0


@pytest.mark.parametrize("length", LENGTHS)
def test_reordering_can_permute_every_later_sentence(lexicon, length):
    # k = 2 + int(.999 * (L-2)) = L-1 positions (all later sentences); a shuffle whose draws are
    # all 0 swaps each item with the first: the later sentences rotate by one
    story = as_story(lexicon, SEVEN[:length])
    rng = ScriptedRandom([0.999] + [0.0] * (length - 1) + [0.0] * (length - 2))
    corrupted, name = reorder(story, rng, context(lexicon, story))
    assert name == "reordering"
    assert text_of(corrupted) == [SEVEN[0], *SEVEN[2:length], SEVEN[1]]
    assert rng.unused == 0


@pytest.mark.parametrize("length", LENGTHS)
def test_negation_can_negate_every_later_sentence(lexicon, length):
    # k = 1 + int(.999 * (L-1)) = L-1, every later sentence can be negated
    negated = [
        "he did not see a big dog .",
        "the dog was n't happy .",
        "he did not throw a ball .",
        "the ball was n't red .",
        "they did not play all day .",
        "he was n't tired .",
    ]
    story = as_story(lexicon, SEVEN[:length])
    rng = ScriptedRandom([0.999] + [0.0] * (length - 1))
    corrupted, name = negate_sentences(story, rng, context(lexicon, story))
    assert name == "negation"
    assert text_of(corrupted) == [SEVEN[0]] + negated[: length - 1]
    assert rng.unused == 0


@pytest.mark.parametrize("length", LENGTHS)
def test_corrupted_stories_of_any_length_keep_their_context_and_length(lexicon, length):
    story = as_story(lexicon, SEVEN[:length])
    ctx = context(lexicon, story)
    for i in range(200):
        corrupted, names = corrupt(story, StoryRandom(0, i), ctx)
        assert names and text_of(corrupted) != SEVEN[:length]
        assert len(corrupted) == length and text_of(corrupted)[0] == SEVEN[0]
        assert all(len(tokens) == len(tags) for tokens, tags in corrupted)
