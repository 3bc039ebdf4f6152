"""GRUEN's text preprocessing and sentence splitting, as the release does it.

The release rewrites periods and line breaks into ``". "``, masks decimal numbers
(``3. 5`` after the rewrite) as ``UNK``, splits sentences with NLTK's English Punkt model
and keeps the sentences that have more than one word once punctuation is removed.

NLTK's trained Punkt data is a separate download. When it is installed it is used, so
sentences split exactly as in the release; when it is absent, an untrained Punkt splitter
with a fixed English abbreviation list is used instead (deterministic, no download) and a
warning says so once. The two agree on ordinary prose; they can differ on rare
abbreviations the fixed list lacks.

>>> text_to_sentences("I went home.\\nIt was 3.5 miles!  Ok.")
['I went home.', 'It was UNK miles!']
"""

from __future__ import annotations

import functools
import logging
import re
import string
from collections.abc import Callable

import nltk
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

logger = logging.getLogger(__name__)

FALLBACK_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "mt", "vs", "etc", "inc", "ltd", "co", "corp", "no"}
)
_DECIMAL = re.compile(r"(\d+)\. (\d+)")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_text(text: str) -> str:
    """The release's character-level rewrite of one text (periods, line breaks, spaces, decimals)."""
    text = text.strip()
    text = text.replace("\n\n", ". ").replace("\n", ". ")
    text = text.replace("..", ".").replace(".", ". ")
    text = text.replace(". . ", ". ").replace(".  . ", ". ")
    while "  " in text:
        text = text.replace("  ", " ")
    match = _DECIMAL.search(text)
    while match:
        text = text.replace(match.group(), "UNK")
        match = _DECIMAL.search(text)
    return text.strip()


@functools.lru_cache(maxsize=1)
def sentence_splitter() -> Callable[[str], list[str]]:
    """NLTK's trained English Punkt when installed (as released), else a deterministic fallback."""
    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        logger.warning(
            "GRUEN: NLTK's 'punkt_tab' data is not installed, so sentences are split by an untrained "
            "Punkt model with a fixed English abbreviation list (deterministic; may differ from the "
            "release on rare abbreviations). Run nltk.download('punkt_tab') for the release's splits."
        )
        params = PunktParameters()
        params.abbrev_types = set(FALLBACK_ABBREVIATIONS)
        return PunktSentenceTokenizer(params).tokenize
    return functools.partial(nltk.tokenize.sent_tokenize, language="english")


def has_several_words(sentence: str) -> bool:
    """The release keeps a sentence only if it has more than one word once punctuation is removed."""
    return len(sentence.translate(_NO_PUNCTUATION).split()) > 1


def text_to_sentences(text: str) -> list[str]:
    """The sentences of one text that GRUEN scores (possibly none)."""
    return [s for s in sentence_splitter()(normalize_text(text)) if has_several_words(s)]
