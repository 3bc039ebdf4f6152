"""How the fluency reader sees a story: its sentences, normalised the same way in training and scoring.

Stories arrive as plain prose ("He didn't go, she said.") or tokenised, as WritingPrompts and
the rated sets write them ("he did n't go , she said ."). A tokenised text is first joined back
into prose (NLTK's Treebank detokeniser), then both become the same words: Penn Treebank tokens,
lowercased, typographic quotes and dashes made plain, a ``.`` after a sentence that ends in a
letter. The reader is uncased, so case carries nothing; the tokenisation is what must agree.
"""

from __future__ import annotations

import functools
import re

from nltk.tokenize.treebank import TreebankWordDetokenizer

from story_quality.union.normalization import StoryNormalization

FLUENCY_NORMALIZATION = StoryNormalization(lowercase=True, roc_tokenize=True, plain_typography=True)
# Punctuation and clitics written apart from the word before them (tokenised text) or attached (prose).
_APART = re.compile(r"\w (?:[,.!?;:]|n't|'[smd]|'re|'ll|'ve)(?=\s|$)", re.IGNORECASE)
_ATTACHED = re.compile(r"\w(?:[,.!?;:]|n't|'[smd]|'re|'ll|'ve)(?=\s|$)", re.IGNORECASE)


@functools.cache
def _detokenizer() -> TreebankWordDetokenizer:
    return TreebankWordDetokenizer()


def looks_tokenised(text: str) -> bool:
    """Whether more punctuation and clitics stand apart from their word than are attached to it.

    >>> looks_tokenised("he did n't go , she said ."), looks_tokenised("He didn't go, she said.")
    (True, False)
    """
    return len(_APART.findall(text)) > len(_ATTACHED.findall(text))


def as_prose(text: str) -> str:
    """A tokenised text joined back into prose, line by line; prose is returned unchanged.

    >>> as_prose("he did n't go . `` why ? '' she asked")
    'he didn\\'t go. "why?" she asked'
    """
    if not looks_tokenised(text):
        return text
    return "\n".join(_detokenizer().detokenize(line.split()) for line in text.splitlines())


def story_sentences(text: str) -> list[str]:
    """The story's normalised sentences, in order (none for a text with no words).

    >>> story_sentences("He didn't go. “Why?” she asked")
    ["he did n't go .", "`` why ? ''", 'she asked .']
    >>> story_sentences("he did n't go . `` why ? '' she asked")
    ["he did n't go .", "`` why ? ''", 'she asked .']
    """
    return FLUENCY_NORMALIZATION.sentences(as_prose(text))


def read_sentences(text: str) -> list[str]:
    """The sentences a reader scores: the story's, or, when it has none, its text whole (``.`` if empty).

    >>> read_sentences("The dog ran. It sat."), read_sentences("  ")
    (['the dog ran .', 'it sat .'], ['.'])
    """
    return story_sentences(text) or [" ".join(text.split()) or "."]
