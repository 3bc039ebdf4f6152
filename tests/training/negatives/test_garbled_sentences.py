"""The fluency reader's negatives: each generated sentence opens and closes as its human one, drawn
by the other fold's model, never equal to a human sentence."""

from __future__ import annotations

import numpy as np
import pytest

from story_quality.training.negatives.garbled_sentences import (
    GENERATED,
    HUMAN,
    GarbleOptions,
    fold_models,
    garbled_sentence,
    sentence_pairs,
)
from story_quality.union.normalization import SENTENCE_STOPS

WORDS = "the a dog cat man woman ran sat ate saw went home to park house big small red old new".split()


def corpus(stories: int = 40, seed: int = 0) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    made = []
    for _ in range(stories):
        sentences = [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 9)))) + " ." for _ in range(4)]
        sentences.append("`` " + " ".join(rng.choice(WORDS, size=5)) + " ! ''")
        made.append(sentences)
    return made


@pytest.mark.parametrize("history", [1, 2, 3])
def test_a_generated_sentence_opens_and_closes_as_its_human_one_with_no_stop_inside(history):
    stories = corpus()
    models = fold_models(stories, GarbleOptions())
    rng = np.random.default_rng(1)
    for story in stories[:10]:
        for index, sentence in enumerate(story):
            words = sentence.split()
            made = garbled_sentence(
                models[1], " ".join(story[:index]).split(), words, history, GarbleOptions(), rng
            )
            tail = words[-2:] if words[-1] == "''" else words[-1:]
            assert made[:2] == words[:2] and made[-len(tail) :] == tail
            assert len(made) >= len(words) - 1  # a stop may come no earlier than the human one's
            assert not set(made[: -len(tail)]) & SENTENCE_STOPS


def test_pairs_alternate_human_and_generated_and_no_generated_sentence_is_human():
    stories = corpus()
    human = frozenset(sentence for story in stories for sentence in story)
    rows = sentence_pairs(stories, 60, fold_models(stories, GarbleOptions()), GarbleOptions(), 3, human)
    assert len(rows) % 2 == 0 and rows
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert (first["label"], second["label"]) == (HUMAN, GENERATED) and first["story"] == second["story"]
        assert first["text"] in human and second["text"] not in human


def test_the_chooser_picks_each_pair_s_negative_among_its_candidates():
    stories = corpus()
    models = fold_models(stories, GarbleOptions())
    seen: list[list[str]] = []

    def last(found):
        seen.extend(found)
        return [len(candidates) - 1 for candidates in found]

    rows = sentence_pairs(stories, 30, models, GarbleOptions(), 5, candidates=3, choose=last)
    negatives = [row["text"] for row in rows if row["label"] == GENERATED]
    assert negatives == [candidates[-1] for candidates in seen]
    assert any(len(candidates) == 3 for candidates in seen)
