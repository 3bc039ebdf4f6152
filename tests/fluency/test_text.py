"""The fluency reader's sentences: the same words from prose and from tokenised text."""

from __future__ import annotations

import pytest

from story_quality.fluency.text import as_prose, looks_tokenised, story_sentences


@pytest.mark.parametrize(
    ("prose", "tokenised"),
    [
        (
            'He didn\'t go home, she said. "Why?" I asked.',
            "he did n't go home , she said . `` why ? '' i asked .",
        ),
        ("It's late; we're done!", "it 's late ; we 're done !"),
        ("The dog ran. It was happy.", "the dog ran . it was happy ."),
    ],
)
def test_prose_and_its_tokenised_form_give_the_same_sentences(prose, tokenised):
    assert looks_tokenised(tokenised) and not looks_tokenised(prose)
    assert story_sentences(prose) == story_sentences(tokenised)


def test_prose_is_left_as_it_is_and_each_line_is_joined_apart():
    assert as_prose('He said, "no." Then left.') == 'He said, "no." Then left.'
    assert as_prose("he went .\nshe did n't .") == "he went.\nshe didn't."


def test_a_text_of_punctuation_alone_gives_its_one_piece_and_a_blank_text_none():
    assert story_sentences("   ") == []
    assert story_sentences("...") == ["..."]
