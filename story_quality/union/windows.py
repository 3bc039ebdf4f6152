"""Reading a long story whole: consecutive windows of whole sentences, scored one by one.

UNION's checkpoints read a story through a window of 200-256 word pieces and the paper kept the
head of anything longer, so the rest of a 600-word story never counts. With
``long_stories="windows"`` the normalised story is cut into consecutive windows at sentence
boundaries, each as long as the window allows; each window is scored as a story of its own
(its first sentence is its leading context, as in the training segments of
``training/corpora.py``) and the story's score is the mean over its windows, each weighted by
its length in word pieces (a short last window does not count as much as a full one). A story
that fits the window is one window, tokenised exactly as the head path tokenises it, so its
score does not change.

A checkpoint records the reading it was validated with under ``config.union_long_stories``;
the metric uses it unless the caller passes ``long_stories``. Checkpoints that record
nothing are read by the head, as the paper did.
"""

from __future__ import annotations

import array
from collections.abc import Callable, Sequence
from typing import Any

from story_quality.union.encoding import ENCODE_CHUNK, Encoded, Rows, special_affixes
from story_quality.union.normalization import StoryNormalization, split_sentences
from story_quality.union.options import LONG_STORIES, LONG_STORIES_CONFIG_KEY


def recorded_long_stories(config: Any) -> str:
    """How a checkpoint reads a story longer than its window: what it records, else ``"head"``."""
    recorded = getattr(config, LONG_STORIES_CONFIG_KEY, None) or "head"
    if recorded not in LONG_STORIES:
        raise ValueError(
            f"The checkpoint's '{LONG_STORIES_CONFIG_KEY}' is {recorded!r}; this version knows {list(LONG_STORIES)}. "
            "Upgrade the metric."
        )
    return recorded


def text_and_sentence_starts(normalization: StoryNormalization, text: str) -> tuple[str, list[int]]:
    """The text the model reads (``normalization(text)``) and where each of its sentences starts.

    >>> from story_quality.union.normalization import ROC_STORIES
    >>> text_and_sentence_starts(ROC_STORIES, "Tom ran. He fell!")
    ('[MALE] ran . he fell !', [0, 13])
    """
    if normalization.is_identity:
        joined, sentences = text, split_sentences(text)
    else:
        sentences = normalization.sentences(text)
        joined = " ".join(sentences)
    starts, position = [], 0
    for sentence in sentences:
        found = joined.find(sentence, position)
        if found >= 0:
            starts.append(found)
            position = found + len(sentence)
    return joined, starts or [0]


def pack_windows(sentence_bounds: Sequence[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of consecutive windows of whole sentences, each at most ``budget``.

    Sentences are added to a window while they fit; a sentence longer than ``budget`` is cut
    into pieces of ``budget`` tokens of its own.

    >>> pack_windows([(0, 3), (3, 5), (5, 9), (9, 20)], budget=5)
    [(0, 5), (5, 9), (9, 14), (14, 19), (19, 20)]
    """
    windows: list[tuple[int, int]] = []
    start = end = None
    for first, last in sentence_bounds:
        if last <= first:
            continue
        if start is not None and last - start <= budget:
            end = last
            continue
        if start is not None:
            windows.append((start, end))
        start, end = first, last
        while end - start > budget:
            windows.append((start, start + budget))
            start += budget
    if start is not None:
        windows.append((start, end))
    return windows


def _sentence_token_bounds(
    offsets: Sequence[tuple[int, int]], starts: Sequence[int]
) -> list[tuple[int, int]]:
    """Token ranges of the sentences starting at the character ``starts`` (tokens by their offsets)."""
    bounds, token = [], 0
    cuts = [*starts[1:], None]
    for cut in cuts:
        first = token
        while token < len(offsets) and (cut is None or offsets[token][0] < cut):
            token += 1
        bounds.append((first, token))
    return bounds


def encode_windows(
    tokenizer,
    texts: Sequence[str],
    max_length: int,
    normalization: StoryNormalization,
    chunk_size: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> Encoded:
    """Every text as consecutive windows of at most ``max_length`` pieces (special tokens included).

    ``Encoded.story_of`` names the text of each window; ``truncated`` is empty (nothing is cut).
    A text that fits is one window with exactly the ids :func:`scoring.encode` gives it.
    """
    chunk_size = ENCODE_CHUNK if chunk_size is None else chunk_size
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
    prefix, suffix = special_affixes(tokenizer)
    budget = max_length - len(prefix) - len(suffix)
    ids, story_of = Rows(), array.array("i")
    for start in range(0, len(texts), chunk_size):
        prepared = [
            text_and_sentence_starts(normalization, text) for text in texts[start : start + chunk_size]
        ]
        # whole stories, longer than the model's window on purpose: no "sequence too long" warning
        encodings = tokenizer(
            [joined for joined, _ in prepared],
            add_special_tokens=False,
            return_offsets_mapping=True,
            verbose=False,
        )
        for offset, ((_, starts), row, offsets) in enumerate(
            zip(prepared, encodings["input_ids"], encodings["offset_mapping"], strict=True)
        ):
            windows = pack_windows(_sentence_token_bounds(offsets, starts), budget) or [(0, 0)]
            for first, last in windows:
                ids.append([*prefix, *row[first:last], *suffix])
                story_of.append(start + offset)
        if progress is not None:
            progress(len(prepared))
    return Encoded(input_ids=ids, truncated=[], max_length=max_length, story_of=story_of)


def story_means(window_scores: Sequence[float], encoded: Encoded, stories: int) -> list[float]:
    """Each story's mean over its windows weighted by their lengths (one window: its score unchanged)."""
    if encoded.story_of is None:
        return list(window_scores)
    totals, weights = [0.0] * stories, [0] * stories
    for story, score, row in zip(encoded.story_of, window_scores, encoded.input_ids, strict=True):
        totals[story] += score * len(row)
        weights[story] += len(row)
    return [total / weight for total, weight in zip(totals, weights, strict=True)]
