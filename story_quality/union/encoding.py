"""A story as the classifier reads it: word-piece ids, cut to the window, held compactly.

Texts are prepared (normalised) and tokenised a chunk at a time and only the ids the model reads
are kept, so memory follows the window, not the length of the stories. The forward passes over
these ids are :mod:`story_quality.union.inference`; reading a long story in windows is
:mod:`story_quality.union.windows`.
"""

from __future__ import annotations

import array
import dataclasses
from collections.abc import Callable, Sequence

# The narrowest window scoring and training accept: a shorter one leaves the classifier too little
# of any story to tell one from another.
MIN_WINDOW = 16
# Texts normalised and tokenised at a time. A fast tokenizer holds every full-length encoding of
# one call at once (a 2,000-word story is ~3,000 pieces with offsets), so the call is cut up.
ENCODE_CHUNK = 256


class Rows(Sequence):
    """Rows of token ids in one growing ``array('i')``: 4 bytes an id, and one allocation for
    all of them instead of one per text (thousands of small blocks pin the heap's pages)."""

    def __init__(self) -> None:
        self._ids = array.array("i")
        self._starts = array.array("q", [0])

    def append(self, row: Sequence[int]) -> None:
        self._ids.extend(row)
        self._starts.append(len(self._ids))

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, i: int) -> array.array:
        if not -len(self) <= i < len(self):
            raise IndexError(f"row {i} of {len(self)}")
        i %= len(self)
        return self._ids[self._starts[i] : self._starts[i + 1]]


@dataclasses.dataclass
class Encoded:
    """Token ids of each row (special tokens included, already truncated) and which texts were cut.

    ``story_of[i]`` is the text row ``i`` belongs to when a text may span several rows (the
    windows of ``story_quality.union.windows``); None: row ``i`` is text ``i``.
    """

    input_ids: Sequence[Sequence[int]]
    truncated: list[int]
    max_length: int
    story_of: Sequence[int] | None = None


def special_affixes(tokenizer) -> tuple[list[int], list[int]]:
    """The special token ids the tokenizer puts before and after a single text."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    raise ValueError("Could not locate the text between the tokenizer's special tokens.")


def encode(
    tokenizer,
    texts: Sequence[str],
    max_length: int,
    prepare: Callable[[str], str] | None = None,
    chunk_size: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> Encoded:
    """Tokenise once, keeping the head of a text longer than ``max_length`` pieces.

    Tokenising to ``max_length + 1`` tells which texts are too long without tokenising them
    to the end twice; they are then cut to ``max_length`` by dropping content before the
    trailing special tokens, exactly what head truncation to ``max_length`` gives.
    ``prepare`` (the story normalisation) is applied to each text just before it is
    tokenised, ``chunk_size`` texts at a time, so no prepared copy of the whole call exists;
    ``progress(n)`` is called after each chunk with the number of texts it held.
    """
    chunk_size = ENCODE_CHUNK if chunk_size is None else chunk_size
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
    suffix = len(special_affixes(tokenizer)[1])
    ids = Rows()
    truncated: list[int] = []
    for start in range(0, len(texts), chunk_size):
        chunk = list(texts[start : start + chunk_size])
        if prepare is not None:
            chunk = [prepare(text) for text in chunk]
        rows = tokenizer(chunk, truncation=True, max_length=max_length + 1)["input_ids"]
        del chunk
        for offset, row in enumerate(rows):
            if len(row) > max_length:
                truncated.append(start + offset)
                row = row[: max_length - suffix] + (row[len(row) - suffix :] if suffix else [])
            ids.append(row)
        if progress is not None:
            progress(len(rows))
    return Encoded(input_ids=ids, truncated=truncated, max_length=max_length)


def append_encoded(joined: Encoded, part: Encoded, start: int) -> None:
    """Add ``part``, the encodings of the texts from ``start`` on, to ``joined``, shifting its text
    indices by ``start`` (``joined.story_of`` None: one row per text)."""
    for row in part.input_ids:
        joined.input_ids.append(row)
    joined.truncated.extend(start + i for i in part.truncated)
    if joined.story_of is not None:
        story_of = range(len(part.input_ids)) if part.story_of is None else part.story_of
        joined.story_of.extend(start + story for story in story_of)
