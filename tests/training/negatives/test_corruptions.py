"""UNION's corruptions on hand-made stories.

Most tests script the random stream: ``StoryRandom`` draws only through ``random()``, so a
list of floats fixes every decision and the expected story can be worked out by hand from
the rules (the derivation is in each test). Distribution tests draw many seeded stories.
"""

import itertools
import math
from collections import Counter

import pytest
from corruption_helpers import DONOR, STORY, ListDonors, ScriptedRandom, as_story, text_of

from story_quality.training.negatives.corruptions import (
    GRAMMAR,
    CorruptionContext,
    KeywordTable,
    StoryRandom,
    corrupt,
    draw_techniques,
    negate_sentences,
    parse_technique_probs,
    reorder,
    repeat,
    substitute,
)
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.training.negatives.morphology import verb_lemma
from story_quality.training.negatives.negation import negate

# The UNION paper's numbers (its technique table), written out rather than read from the module under test.
PAPER_COUNT_PROBS = {1: 0.5, 2: 0.2, 3: 0.2, 4: 0.1}
PAPER_TECHNIQUE_PROBS = {"repetition": 0.1, "substitution": 0.3, "reordering": 0.4, "negation": 0.2}
PAPER_SENTENCE_REPETITION = 0.7  # the other 30 %: n-gram repetition
PAPER_SENTENCE_SUBSTITUTION = 0.5  # the other 50 %: word substitution


@pytest.fixture(scope="module")
def lexicon():
    return Lexicon(tagger="heuristic", wordnet="none", antonyms={"happy": ["sad"]}).resolve()


@pytest.fixture
def ctx(lexicon):
    counts = {("NN", "cat"): 3, ("NN", "ball"): 1, ("VBD", "ran"): 2, ("JJ", "small"): 2, ("VBP", "swim"): 1}
    keywords = KeywordTable.from_counts(counts)
    donors = ListDonors([(7, as_story(lexicon, STORY)), (8, as_story(lexicon, DONOR))])
    return CorruptionContext(lexicon=lexicon, keywords=keywords, donors=donors, story_index=7)


def test_sentence_repetition_copies_one_sentence_over_one_plus_half_the_length(lexicon, ctx):
    # 0.0 < .7: sentence level; source = later[int(.5 * 4)] = sentence 3; targets: the
    # min(1 + 5 // 2, 3) = 3 other later sentences (Fisher-Yates with zeros keeps order).
    rng = ScriptedRandom([0.0, 0.5, 0.0, 0.0, 0.0])
    story, name = repeat(as_story(lexicon, STORY), rng, ctx)
    assert name == "repetition:sentence"
    assert text_of(story) == [STORY[0]] + [STORY[3]] * 4
    assert rng.unused == 0


def test_ngram_repetition_duplicates_in_place_len_over_two_times(lexicon, ctx):
    # .9 >= .7: n-gram level, 5 // 2 = 2 times.  1st: sentence 1 (int(0*4)), n = 1 + int(.5*4) = 3,
    # start 0 -> "he saw a" doubled.  2nd: sentence 4 (int(.75*4)), n = 1, start int(.99*4) = 3 -> "day".
    rng = ScriptedRandom([0.9, 0.0, 0.5, 0.0, 0.75, 0.0, 0.99])
    story, name = repeat(as_story(lexicon, STORY), rng, ctx)
    assert name == "repetition:ngram"
    assert text_of(story) == [
        STORY[0],
        "he saw a he saw a big dog .",
        STORY[2],
        STORY[3],
        "they played all day day .",
    ]
    assert all(len(tokens) == len(tags) for tokens, tags in story)


def test_sentence_substitution_takes_sentences_of_another_story(lexicon, ctx):
    # .0 < .5: sentence level; k = 1 + int(.3*4) = 2; donor row 0 is the story itself
    # (redrawn), row int(.6*2) = 1 is DONOR; targets: Fisher-Yates of [1,2,3,4] with
    # j = int(.5*4) = 2 then 1 + 0 -> [3, 2]; donor sentences [1, 2].
    rng = ScriptedRandom([0.0, 0.3, 0.0, 0.6, 0.5, 0.0, 0.0, 0.0])
    story, name = substitute(as_story(lexicon, STORY), rng, ctx)
    assert name == "substitution:sentence"
    assert text_of(story) == [STORY[0], STORY[1], DONOR[2], DONOR[1], STORY[4]]


def test_word_substitution_prefers_an_antonym(lexicon, ctx):
    # .9: word level.  Keywords of sentences 1..4 (heuristic tags): saw big dog | dog happy |
    # threw ball | played day -> K = 9, m = 1 + int(0 * max(1, int(.15*9))) = 1;
    # pick int(.5 * 9) = 4 -> "happy", whose antonym is "sad".
    rng = ScriptedRandom([0.9, 0.0, 0.5, 0.0])
    story, name = substitute(as_story(lexicon, STORY), rng, ctx)
    assert name == "substitution:word"
    assert text_of(story) == [STORY[0], STORY[1], "the dog was sad .", STORY[3], STORY[4]]


def test_word_substitution_without_antonym_draws_a_same_pos_keyword_by_frequency(lexicon, ctx):
    # pick int(.7222 * 9) = 6 -> "ball" (NN), no antonym; NN table [cat: 3, ball: 1]:
    # target int(0 * 4) = 0 falls in cat's range.
    rng = ScriptedRandom([0.9, 0.0, 0.7222, 0.0])
    story, _ = substitute(as_story(lexicon, STORY), rng, ctx)
    assert text_of(story)[3] == "he threw a cat ."


def test_reordering_permutes_and_retries_until_the_order_changed(lexicon, ctx):
    # k = 2 + int(0 * 3) = 2 sentences, positions [1, 2]; the first shuffle (int(.99*2) = 1)
    # keeps the order, so it is redrawn; the second (0) swaps.
    rng = ScriptedRandom([0.0, 0.0, 0.0, 0.99, 0.0])
    story, name = reorder(as_story(lexicon, STORY), rng, ctx)
    assert name == "reordering"
    assert text_of(story) == [STORY[0], STORY[2], STORY[1], STORY[3], STORY[4]]
    assert rng.unused == 0


def test_negation_of_k_sentences(lexicon, ctx):
    # k = 1 + int(0 * 4) = 1; all four later sentences can be negated; int(.3 * 4) = 1 -> sentence 2.
    rng = ScriptedRandom([0.0, 0.3])
    story, name = negate_sentences(as_story(lexicon, STORY), rng, ctx)
    assert name == "negation"
    assert text_of(story) == [STORY[0], STORY[1], "the dog was n't happy .", STORY[3], STORY[4]]


@pytest.mark.parametrize(
    ("sentence", "tags", "expected"),
    [
        ("he walks home .", "PRP VBZ RB .", "he does not walk home ."),
        ("i walk home .", "PRP VBP RB .", "i do not walk home ."),
        ("they went home .", "PRP VBD RB .", "they did not go home ."),
        ("she tried hard .", "PRP VBD RB .", "she did not try hard ."),
        ("running fast , he fell .", "VBG RB , PRP VBD .", "not running fast , he fell ."),
        ("he was tired .", "PRP VBD JJ .", "he was n't tired ."),
        ("she can swim .", "PRP MD VB .", "she can not swim ."),
        ("he did n't go .", "PRP VBD RB VB .", "he did go ."),
        ("he ca n't swim .", "PRP MD RB VB .", "he can swim ."),
        ("she never lies .", "PRP RB VBZ .", "she lies ."),
        ("Went home early .", "VBD RB RB .", "Did not go home early ."),
        ("what a day !", "WP DT NN .", None),
    ],
)
def test_negation_rules(sentence, tags, expected):
    result = negate(sentence.split(), tags.split(), verb_lemma)
    if expected is None:
        assert result is None
    else:
        tokens, new_tags = result
        assert " ".join(tokens) == expected
        assert len(tokens) == len(new_tags)


def test_technique_draw_follows_the_two_distributions():
    # count: .6 falls in the 2nd bin of [.5, .7, .9, 1]; then .5 -> reordering (bins .1 .4 .8 1),
    # then .9 of the remaining mass .6 -> negation (bins .1 .4 .6).
    assert draw_techniques(ScriptedRandom([0.6, 0.5, 0.9])) == ["reordering", "negation"]


def _reference_inclusion_probabilities(probs=PAPER_TECHNIQUE_PROBS):
    """P(technique among the drawn ones), by enumerating every ordered draw (slow, exact)."""
    names = [name for name, weight in probs.items() if weight > 0]
    total = sum(probs.values())
    included = Counter()
    for n, p_n in PAPER_COUNT_PROBS.items():
        for order in itertools.permutations(names, min(n, len(names))):
            p, left = p_n, total
            for name in order:
                p *= probs[name] / left
                left -= probs[name]
            for name in order:
                included[name] += p
    return included


def _within(observed, expected_p, n, sigmas=4.5):
    return abs(observed / n - expected_p) <= sigmas * math.sqrt(expected_p * (1 - expected_p) / n) + 1e-12


def test_technique_count_and_inclusion_distributions_match_exactly_computed_ones():
    n = 20000
    draws = [draw_techniques(StoryRandom(0, i)) for i in range(n)]
    counts = Counter(len(d) for d in draws)
    for k, p in PAPER_COUNT_PROBS.items():
        assert _within(counts[k], p, n), (k, counts[k] / n, p)
    first = Counter(d[0] for d in draws)
    for name, p in PAPER_TECHNIQUE_PROBS.items():
        assert _within(first[name], p, n), (name, first[name] / n, p)
    included = Counter(name for d in draws for name in d)
    for name, p in _reference_inclusion_probabilities().items():
        assert _within(included[name], p, n), (name, included[name] / n, p)
    assert all(len(set(d)) == len(d) for d in draws)


OURS = {"repetition": 0.1, GRAMMAR: 0.15, "substitution": 0.25, "reordering": 0.3, "negation": 0.2}


def test_custom_technique_weights_are_drawn_as_computed_exactly_and_weight_0_never():
    n = 20000
    draws = [draw_techniques(StoryRandom(0, i), OURS) for i in range(n)]
    included = Counter(name for d in draws for name in d)
    for name, p in _reference_inclusion_probabilities(OURS).items():
        assert _within(included[name], p, n), (name, included[name] / n, p)
    with_zero = {**PAPER_TECHNIQUE_PROBS, GRAMMAR: 0.0}
    assert not any(GRAMMAR in draw_techniques(StoryRandom(0, i), with_zero) for i in range(n))


def test_the_papers_weights_in_any_key_order_draw_exactly_as_the_default(lexicon, ctx):
    story = as_story(lexicon, STORY)
    defaults = [corrupt(story, StoryRandom(2, i), ctx) for i in range(300)]
    # the paper's weights, written out, in another key order: exactly the default draws
    ctx.technique_probs = dict([*reversed(PAPER_TECHNIQUE_PROBS.items()), (GRAMMAR, 0.0)])
    assert [corrupt(story, StoryRandom(2, i), ctx) for i in range(300)] == defaults


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("repetition=x", "'repetition=x' is not NAME=NUMBER"),
        ("repetition", "'repetition' is not NAME=NUMBER"),
        ("shuffle=1", r"unknown corruption technique\(s\) \['shuffle'\]"),
        ("repetition=-1", "repetition=-1.0 must be a finite number >= 0"),
        ("repetition=nan", "repetition=nan must be"),
        ("repetition=0,negation=0", "at least one technique needs a positive weight"),
        ("repetition=0.1,negation=1,repetition=0.5", "technique 'repetition' is given twice"),
    ],
)
def test_bad_technique_weights_are_rejected_naming_the_item(text, message):
    with pytest.raises(ValueError, match=message):
        parse_technique_probs(text)


def test_technique_weights_parse_in_the_techniques_order():
    parsed = parse_technique_probs("negation=0.2, grammar=1,repetition=.5")
    assert list(parsed.items()) == [("repetition", 0.5), ("negation", 0.2), (GRAMMAR, 1.0)]


def test_corrupt_applies_cumulatively_with_the_variant_split_and_never_touches_sentence_0(lexicon, ctx):
    story = as_story(lexicon, STORY)
    n = 3000
    applied = [corrupt(story, StoryRandom(1, i), ctx) for i in range(n)]
    for corrupted, names in applied:
        assert text_of(corrupted)[0] == STORY[0]
        assert text_of(corrupted) != STORY and names
    # every technique can change this story, so the applied count is the drawn count
    counts = Counter(len(names) for _, names in applied)
    for k, p in PAPER_COUNT_PROBS.items():
        assert _within(counts[k], p, n), (k, counts[k] / n)
    names = Counter(name for _, ns in applied for name in ns)
    repetitions = names["repetition:sentence"] + names["repetition:ngram"]
    assert _within(names["repetition:sentence"], PAPER_SENTENCE_REPETITION, repetitions)
    substitutions = names["substitution:sentence"] + names["substitution:word"]
    assert _within(names["substitution:sentence"], PAPER_SENTENCE_SUBSTITUTION, substitutions)


def test_corrupt_is_deterministic_per_seed_and_story(lexicon, ctx):
    story = as_story(lexicon, STORY)
    runs = [corrupt(story, StoryRandom(3, 11), ctx) for _ in range(2)]
    assert runs[0] == runs[1]
    assert {tuple(text_of(corrupt(story, StoryRandom(3, i), ctx)[0])) for i in range(20)} != {
        tuple(text_of(runs[0][0]))
    }


def test_a_story_no_technique_can_change_is_reported_as_uncorrupted(lexicon):
    story = as_story(lexicon, ["hello there .", "! ! !", "! ! !"])
    alone = CorruptionContext(
        lexicon=lexicon,
        keywords=KeywordTable.from_counts({}),
        donors=ListDonors([(0, story)]),
        story_index=0,
    )
    corrupted, names = corrupt(story, StoryRandom(0, 0), alone)
    assert names == [] and corrupted == story


def test_keyword_draws_follow_corpus_frequency():
    table = KeywordTable.from_counts({("NN", "cat"): 6, ("NN", "dog"): 3, ("NN", "cow"): 1, ("JJ", "red"): 5})
    assert table.words["NN"] == ("cat", "dog", "cow")
    n = 6000
    draws = Counter(table.draw("NN", StoryRandom(5, i), exclude="zebra") for i in range(n))
    for word, p in (("cat", 0.6), ("dog", 0.3), ("cow", 0.1)):
        assert _within(draws[word], p, n)
    assert table.draw("NN", StoryRandom(0, 0), exclude="cat") in ("dog", "cow")
    assert table.draw("VB", StoryRandom(0, 0), exclude="x") is None
    assert KeywordTable.from_counts({("JJ", "red"): 2}).draw("JJ", StoryRandom(0, 0), exclude="red") is None
