"""N-gram continuations: drawn by the model of the other fold, seeded, ended at a sentence stop."""

from __future__ import annotations

from collections import Counter

import datasets
import numpy as np
import pytest

from story_quality.training.negatives.ngram_continuations import (
    GENERATED_NGRAM,
    NgramModel,
    NgramOptions,
    replace_with_ngram_continuations,
    stories_opening_elsewhere,
)


def _corpus(stories: list[tuple[str, str]]) -> datasets.Dataset:
    """Built-corpus rows: each story's human row, then a corrupted row (its sentences reversed)."""
    rows: dict[str, list] = {
        k: [] for k in ("text", "label", "original", "context", "corruptions", "story_index")
    }
    for index, (context, rest) in enumerate(stories):
        original = f"{context} {rest}"
        for text, label, names in ((original, 1, []), (f"{rest} {context}", 0, ["reordering"])):
            rows["text"].append(text)
            rows["label"].append(label)
            rows["original"].append(original)
            rows["context"].append(context)
            rows["corruptions"].append(names)
            rows["story_index"].append(index)
    return datasets.Dataset.from_dict(rows)


def _fold_story(index: int) -> tuple[str, str]:
    # Each fold has its own vocabulary: a continuation can only use the other fold's words.
    mark = "even" if index % 2 == 0 else "odd"
    return f"{mark} story {index} opens .", f"{mark} word {mark} thing . {mark} end again ."


def test_each_story_is_continued_by_the_model_of_the_other_fold():
    corpus = _corpus([_fold_story(i) for i in range(8)])
    out, replaced = replace_with_ngram_continuations(corpus, 1.0, seed=3, options=NgramOptions(order=2))
    assert replaced == 8
    for row in out:
        if row["label"] == 1:
            continue
        assert row["corruptions"] == [GENERATED_NGRAM]
        assert row["text"].startswith(row["context"] + " ")
        sample = row["text"][len(row["context"]) + 1 :].split()
        own = "even" if row["story_index"] % 2 == 0 else "odd"
        assert sample and own not in sample  # no word of its own fold's vocabulary
        assert sample[-1] == "."


def test_human_rows_stay_and_the_share_replaced_follows_the_fraction():
    corpus = _corpus([_fold_story(i) for i in range(400)])
    out, replaced = replace_with_ngram_continuations(corpus, 0.25, seed=1, options=NgramOptions(order=2))
    assert out["text"][0::2] == corpus["text"][0::2]
    assert 60 < replaced < 140  # 25 % of 400, drawn per row
    changed = sum(a != b for a, b in zip(out["text"][1::2], corpus["text"][1::2], strict=True))
    assert changed == replaced


def test_the_same_seed_gives_the_same_rows_and_another_seed_other_rows():
    corpus = _corpus([_fold_story(i) for i in range(40)])
    first = replace_with_ngram_continuations(corpus, 0.5, seed=5)[0]["text"]
    again = replace_with_ngram_continuations(corpus, 0.5, seed=5)[0]["text"]
    other = replace_with_ngram_continuations(corpus, 0.5, seed=6)[0]["text"]
    assert first == again and first != other


def test_a_history_with_one_continuation_backs_off_to_a_shorter_one():
    # After "a b" the texts go on with "c" only; after "b" with "c" or "x": min_choices=2 skips (a, b).
    model = NgramModel(["a b c .", "z b x ."], NgramOptions(order=3, min_choices=2))
    rng = np.random.default_rng(0)
    draws = Counter(model.next_word(["a", "b"], rng) for _ in range(400))
    assert set(draws) == {"c", "x"} and min(draws.values()) > 120
    verbatim = NgramModel(["a b c .", "z b x ."], NgramOptions(order=3, min_choices=1))
    assert {verbatim.next_word(["a", "b"], rng) for _ in range(50)} == {"c"}


def test_draws_follow_the_counts():
    model = NgramModel(["q r ."] * 3 + ["q s ."], NgramOptions(order=2, min_choices=1))
    rng = np.random.default_rng(1)
    draws = Counter(model.next_word(["q"], rng) for _ in range(4000))
    assert abs(draws["r"] / 4000 - 0.75) < 0.03


def test_a_continuation_runs_to_the_length_then_to_a_sentence_stop():
    # Every bigram has one continuation: the text is fixed; it passes 6 words, then stops at "."
    model = NgramModel(["start a b c . e f g ."], NgramOptions(order=2, min_choices=1))
    text = model.continue_text("start", 6, np.random.default_rng(0)).split()
    assert text == ["a", "b", "c", ".", "e", "f", "g", "."]
    capped = NgramModel(["start a b a b"], NgramOptions(order=2, min_choices=1, overrun_words=3))
    assert len(capped.continue_text("start", 2, np.random.default_rng(0)).split()) == 5


@pytest.mark.parametrize(
    ("options", "message"),
    [({"order": 1}, "order"), ({"min_choices": 0}, "min_choices"), ({"overrun_words": -1}, "overrun_words")],
)
def test_bad_options_are_refused_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        NgramOptions(**options)


def test_a_bad_fraction_is_refused():
    with pytest.raises(ValueError, match="fraction"):
        replace_with_ngram_continuations(_corpus([_fold_story(0), _fold_story(1)]), 1.5, seed=0)


def test_given_texts_one_model_of_them_continues_every_story():
    corpus = _corpus([_fold_story(i) for i in range(6)])
    outside = ["far words here . far words there .", "far words go on . far end ."]
    out, replaced = replace_with_ngram_continuations(
        corpus, 1.0, seed=2, options=NgramOptions(order=2), model_texts=outside
    )
    assert replaced == 6
    vocabulary = {word for text in outside for word in text.split()}
    for row in out:
        if row["label"] == 0:
            sample = row["text"][len(row["context"]) + 1 :].split()
            assert sample and set(sample) <= vocabulary  # neither fold's words: only the given texts'


def test_the_given_texts_change_the_rows_and_an_empty_set_is_refused():
    corpus = _corpus([_fold_story(i) for i in range(6)])
    own = replace_with_ngram_continuations(corpus, 1.0, seed=2, options=NgramOptions(order=2))[0]
    given = replace_with_ngram_continuations(
        corpus, 1.0, seed=2, options=NgramOptions(order=2), model_texts=["far words here ."]
    )[0]
    assert own["text"] != given["text"] and own._fingerprint != given._fingerprint
    with pytest.raises(ValueError, match="model_texts is empty"):
        replace_with_ngram_continuations(corpus, 1.0, seed=2, model_texts=[])


def test_stories_opening_like_a_corpus_story_are_left_out_of_the_model():
    stories = [["even story 0 opens .", "more ."], ["a new opening .", "kept ."], [], ["other ."]]
    texts, dropped = stories_opening_elsewhere(stories, {"even story 0 opens ."})
    assert texts == ["a new opening . kept .", "other ."] and dropped == 1
