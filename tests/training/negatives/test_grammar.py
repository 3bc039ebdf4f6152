"""Grammar-breaking edits: each does what it says inside one sentence, seeded like every corruption."""

from __future__ import annotations

import datasets
import pytest
from corruption_helpers import STORY, ListDonors, ScriptedRandom, as_story, text_of

from story_quality.training.negatives import grammar
from story_quality.training.negatives.build import build_union_dataset, read_summary
from story_quality.training.negatives.corruptions import (
    TECHNIQUES,
    CorruptionContext,
    KeywordTable,
    StoryRandom,
    break_grammar,
)
from story_quality.training.negatives.lexicon import Lexicon

PARK = "ken went to the big park .".split()
PARK_TAGS = ["NNP", "VBD", "TO", "DT", "JJ", "NN", "."]


def edited(name: str, tokens: list[str], tags: list[str], floats: list[float]) -> str | None:
    rng = ScriptedRandom(floats)
    span = len(tokens) - 1  # one final punctuation mark
    result = grammar.EDITS[name](list(tokens), list(tags), span, rng)
    assert rng.unused == 0, "the edit drew fewer numbers than scripted"
    if result is None:
        return None
    assert len(result[0]) == len(result[1])  # every word keeps a tag
    return " ".join(result[0])


def test_each_edit_does_what_it_says_on_a_toy_sentence():
    # drop: span 6 -> m = U{1..1} (one draw), then the sample's first pick index(6) at 0.5 = 3: "the"
    assert edited("drop", PARK, PARK_TAGS, [0.0, 0.5]) == "ken went to big park ."
    # double: the words 0..5, index(6) at 0.2 = 1: "went"
    assert edited("double", PARK, PARK_TAGS, [0.2]) == "ken went went to the big park ."
    # swap: adjacent pairs 0..4, index(5) at 0.5 = 2: "to the" -> "the to"
    assert edited("swap", PARK, PARK_TAGS, [0.5]) == "ken went the to big park ."
    # agreement: candidates went (-> go) and park (-> parks); index(2) picks one
    assert edited("agreement", PARK, PARK_TAGS, [0.0]) == "ken go to the big park ."
    assert edited("agreement", PARK, PARK_TAGS, [0.9]) == "ken went to the big parks ."
    # loop: n = 2 + index(3) at 0.4 = 3, end = 3 + index(4) at 0.99 = 6, two more times at 0.0
    assert edited("loop", PARK, PARK_TAGS, [0.4, 0.99, 0.0]) == (
        "ken went to the big park the big park the big park ."
    )


def test_agreement_breaks_pairs_verbs_and_number_keeping_case():
    words = ["Was", "They", "walk", "dogs", "an", "slowly"]
    tags = ["VBD", "PRP", "VBP", "NNS", "DT", "RB"]
    assert [grammar.broken_form(w, t) for w, t in zip(words, tags, strict=True)] == [
        ("Were", "VBD"),
        None,
        ("walks", "VBZ"),
        ("dog", "NN"),
        ("a", "DT"),
        None,
    ]
    assert grammar.broken_form("put", "VBD") is None  # its base form is itself: no change, no edit


def test_an_edit_that_cannot_change_the_sentence_declines():
    assert edited("drop", ["he", "ran", "off", "."], ["PRP", "VBD", "RP", "."], []) is None
    assert edited("swap", ["no", "no", "."], ["DT", "DT", "."], []) is None
    assert edited("loop", ["no", "."], ["DT", "."], []) is None
    assert edited("agreement", ["oh", "wow", "."], ["UH", "UH", "."], []) is None
    assert edited("double", [",", "."], [",", "."], []) is None


@pytest.fixture(scope="module")
def ctx() -> CorruptionContext:
    lexicon = Lexicon(tagger="heuristic", wordnet="none")
    return CorruptionContext(
        lexicon=lexicon, keywords=KeywordTable.from_counts({}), donors=ListDonors([]), story_index=0
    )


def test_the_technique_is_registered_seeded_and_stays_inside_each_sentence(ctx):
    assert TECHNIQUES["grammar"] is break_grammar
    story = as_story(ctx.lexicon, STORY)
    outcomes, labels = [], set()
    for seed in range(60):
        result = break_grammar(story, StoryRandom(seed, 0), ctx)
        assert result is not None
        again = break_grammar(story, StoryRandom(seed, 0), ctx)
        assert text_of(again[0]) == text_of(result[0]) and again[1] == result[1]  # same seed, same story
        new, label = result
        labels.add(label)
        outcomes.append(text_of(new))
        assert len(new) == len(story) and new[0] == story[0]  # no sentence added, moved or lost; context kept
        changed = [i for i in range(len(story)) if new[i][0] != story[i][0]]
        assert 1 <= len(changed) <= 2  # k ~ U{1..(5 - 1) // 2}
        for i in changed:
            before, after = story[i][0], new[i][0]
            assert after[-1] == before[-1] == "."  # the final punctuation stays last
            if label == "grammar:agreement":
                assert (
                    len(after) == len(before) and sum(a != b for a, b in zip(after, before, strict=True)) == 1
                )
            else:  # words of this sentence only
                assert set(after) <= set(before)
    assert labels == {f"grammar:{name}" for name in grammar.EDITS}
    assert len({tuple(o) for o in outcomes}) > 40  # different seeds, different stories


def test_a_corpus_with_grammar_negatives_is_the_same_for_any_num_proc():
    texts = [
        f"Ken went to the park on day {i}. He saw a big dog. The dog was happy. "
        "He threw a ball. They played all day."
        for i in range(16)
    ]
    stories = datasets.Dataset.from_dict({"text": texts})
    lexicon = Lexicon(tagger="heuristic", wordnet="none")
    built = build_union_dataset(stories, lexicon=lexicon, technique_probs={"grammar": 1.0}, seed=3)
    summary = read_summary(built)
    assert summary["technique_probs"] == {"grammar": 1.0}
    assert set(summary["corruptions"]) <= {f"grammar:{name}" for name in grammar.EDITS}
    assert sum(summary["corruptions"].values()) == 16
    again = build_union_dataset(
        stories, lexicon=lexicon, technique_probs={"grammar": 1.0}, seed=3, num_proc=2, batch_size=5
    )
    assert again.to_list() == built.to_list()
    other = build_union_dataset(stories, lexicon=lexicon, technique_probs={"grammar": 1.0}, seed=4)
    assert other["text"] != built["text"]
