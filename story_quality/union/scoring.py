"""Fast, order-independent batched inference of a sequence classifier.

Kept apart from the ``evaluate`` wrapper so the benchmark and the tests can drive the same
code the metric runs. Texts are tokenised once, sorted by length and padded per batch, so a
batch of short stories never pays for one long story; scores are put back in input order.
Texts are prepared and tokenised a chunk at a time and only the ids the model reads are
kept, so memory follows the window, not the length of the stories.
"""

from __future__ import annotations

import array
import dataclasses
from collections.abc import Callable, Sequence

import torch

from story_quality.batching import length_sorted_batches, pad_batch
from story_quality.precision import autocast

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


def class_probabilities(
    logits_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    encoded: Encoded,
    label_index: int,
    pad_id: int,
    batch_size: int,
    device: torch.device,
    precision: str = "fp32",
    progress=None,
) -> list[float]:
    """P(label) for every encoded text, in input order.

    ``logits_fn(input_ids, attention_mask)`` returns the classifier's logits, run in ``precision``
    (:mod:`story_quality.precision`); ``progress`` wraps the batch iterator.
    """
    lengths = [len(r) for r in encoded.input_ids]
    batches = list(length_sorted_batches(lengths, batch_size))
    scores = [0.0] * len(lengths)
    with torch.inference_mode(), autocast(precision, device):
        for batch in progress(batches) if progress else batches:
            input_ids, attention_mask = pad_batch([encoded.input_ids[i] for i in batch], pad_id, device)
            logits = logits_fn(input_ids, attention_mask).float()
            probs = torch.softmax(logits, dim=-1)[:, label_index].tolist()
            for i, p in zip(batch, probs, strict=True):
                scores[i] = p
    return scores
