"""The texts a metric is given: what cannot be scored is refused, naming the item, before any model
work; what is mostly unread is named in a warning once tokenised.

What counts as blank, as holding a word, as mostly outside the checkpoints' language or
vocabulary; :func:`check_texts` refuses what cannot be scored in microseconds, with a message that
says what is expected, never deep inside a tokenizer or torch; :func:`warn_unread_texts` names
the texts whose word pieces the vocabulary mostly does not know. The options' checks are in
:mod:`story_quality.options`, the device's in :mod:`story_quality.devices`.
"""

from __future__ import annotations

import collections
import functools
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from story_quality.warning_origin import user_stacklevel

# Characters no reader sees: controls, format characters (zero-width spaces, BOMs), lone surrogates.
# Union's normalisation turns them into spaces (story_quality.union.normalization.remove_invisible).
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
# Blank text holds nothing but those, separators and combining marks.
_BLANK_CATEGORIES = INVISIBLE_CATEGORIES | {"Zs", "Zl", "Zp", "Mn", "Me"}
SCORABLE_HINT = "every text must hold at least one word (a letter or a digit)"


def is_blank(text: str) -> bool:
    """True when ``text`` holds nothing a reader sees: whitespace, zero-width and control characters.

    >>> is_blank(" \\u200b\\ufeff\\x00"), is_blank("a\\u200b")
    (True, False)
    """
    return all(c.isspace() or unicodedata.category(c) in _BLANK_CATEGORIES for c in text)


def has_word(text: str) -> bool:
    """True when ``text`` holds a word: at least one letter or digit, in any script.

    Text without one (punctuation, symbols, emoji) gives a metric nothing to read: union refuses
    it as it refuses blank text, and gruen scores it 0.0 as it scores blank text.

    >>> has_word("..."), has_word("\U0001f600 \U0001f389"), has_word("\u72d7"), has_word("42!")
    (False, False, True, True)
    """
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def mostly_non_latin(text: str) -> bool:
    """True when more than half of the letters of ``text`` are not Latin (Chinese, Cyrillic ...):
    text outside the language of the English checkpoints both metrics ship with.

    >>> mostly_non_latin("\u4ed6\u53bb\u4e86\u5546\u5e97\u3002 OK."), mostly_non_latin("Caf\u00e9 cr\u00e8me")
    (True, False)
    """
    if text.isascii():  # every ASCII letter is Latin
        return False
    letters = {c: n for c, n in collections.Counter(text).items() if c.isalpha()}
    foreign = sum(n for c, n in letters.items() if not _is_latin(c))
    return 2 * foreign > sum(letters.values())


@functools.lru_cache(maxsize=4096)
def _is_latin(letter: str) -> bool:
    return unicodedata.name(letter, "").startswith("LATIN")


# A text with more than this share of its word pieces unknown to the vocabulary is mostly unread.
UNKNOWN_SHARE_WARNING = 0.5


def unknown_share(piece_ids: Iterable[int], unknown_id: int | None, special_ids: Iterable[int]) -> float:
    """The share of a text's word pieces (special tokens left out) that the vocabulary does not know."""
    special = set(special_ids) - {unknown_id}
    pieces = [piece for piece in piece_ids if piece not in special]
    return sum(piece == unknown_id for piece in pieces) / len(pieces) if pieces else 0.0


def unknown_shares(tokenizer, texts: Sequence[str]) -> list[float]:
    """:func:`unknown_share` of each text, as ``tokenizer`` splits it."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
    return [unknown_share(ids, tokenizer.unk_token_id, tokenizer.all_special_ids) for ids in encoded]


def warn_unread_texts(texts: Sequence[str], unknown_shares: Sequence[float]) -> None:
    """Warn, naming the items, when most of a text is outside the checkpoint's vocabulary (over half
    of its word pieces unknown) or outside its language (mostly a non-Latin script): such scores
    come out as numbers but say little about the text."""
    # Text with no word has its own documented treatment (refused, or scored as blank): no warning.
    unknown = [
        i for i, share in enumerate(unknown_shares) if share > UNKNOWN_SHARE_WARNING and has_word(texts[i])
    ]
    foreign = [i for i, text in enumerate(texts) if mostly_non_latin(text)]
    for items, what in (
        (unknown, "most of their word pieces are unknown to the checkpoint's vocabulary"),
        (foreign, "most of their letters are not Latin, and the checkpoints read English"),
    ):
        if items:
            named = ", ".join(f"predictions[{i}]" for i in items[:10]) + (", ..." if len(items) > 10 else "")
            warnings.warn(
                f"{len(items)} of {len(texts)} texts are mostly unread: {what} ({named}); "
                "their scores say little about them.",
                stacklevel=user_stacklevel(),
            )


def check_texts(predictions: Any, *, surrogates: bool = True, allow_blank: bool = False) -> list[str]:
    """``predictions`` as a list of strings, or an error naming what is wrong and where.

    ``surrogates=False`` refuses a lone surrogate (half of a UTF-16 pair: a decoding error
    upstream) instead of letting the caller's normalisation drop it; ``allow_blank`` lets a
    metric that gives blank text, and text with no word (:func:`has_word`), a documented score
    take it.
    """
    if predictions is None:
        raise ValueError("predictions is missing: pass predictions=[...] (a list of strings) to compute.")
    if isinstance(predictions, str | bytes):
        raise TypeError(
            f"predictions must be a list of strings, got one {type(predictions).__name__}; wrap it: [text]."
        )
    if isinstance(predictions, Mapping):
        raise TypeError(
            f"predictions is a {type(predictions).__name__} (keys {list(predictions)[:3]}), not a list of "
            "strings; a datasets slice such as ds[:2] is a dict of columns: pass ds[:2]['text'] or ds['text']."
        )
    if isinstance(predictions, set | frozenset) or not isinstance(predictions, Sequence | Iterable):
        raise TypeError(
            f"predictions must be a list of strings (in a fixed order), got {type(predictions).__name__}."
        )
    texts = list(predictions)
    for i, text in enumerate(texts):
        if text is None:
            raise ValueError(f"predictions[{i}] is None; every text must be a non-empty string.")
        if not isinstance(text, str):
            raise TypeError(f"predictions[{i}] is a {type(text).__name__}, not a string: {text!r:.80}")
        if not allow_blank and is_blank(text):
            raise ValueError(
                f"predictions[{i}] is empty, whitespace or invisible characters only; {SCORABLE_HINT}."
            )
        if not allow_blank and not has_word(text):
            raise ValueError(
                f"predictions[{i}] has no word: no letter or digit in any script (punctuation, symbols or "
                f"emoji only: {text!r:.40}); {SCORABLE_HINT}."
            )
        if not surrogates and any(unicodedata.category(c) == "Cs" for c in text):
            raise ValueError(
                f"predictions[{i}] holds a lone surrogate (half of a UTF-16 pair), which is not text; "
                "decode the input with errors='replace' or fix its encoding."
            )
    return texts
