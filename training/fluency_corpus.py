"""Human story corpora as the fluency readers see them: each story as its normalised sentences.

One reader of the corpus files for every fluency recipe: the (c) reader's training pairs
(``training/build_fluency_data.py``), the SLOR reader's n-gram counts and the percentile tables
(``benchmarks/build_slor_lm.py``, ``benchmarks/build_fluency_percentiles.py``). One story in
:data:`HELD_OUT_EVERY` (by its index among the corpus's stories, as :func:`corpus_sentences`
returns them) is held out: the (c) reader's validation split, left out of the SLOR counts, and
the human sentences of the percentile tables.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

from story_quality.fluency.text import story_sentences
from story_quality.training.corpora import load_stories

HELD_OUT_EVERY = 20
WP_SEGMENTS = 16  # WritingPrompts segments kept per story (each segment is one story here)


def is_held_out(story_index: int, every: int = HELD_OUT_EVERY) -> bool:
    """Whether the story of this index is held out of training and counts."""
    return story_index % every == 0


def corpus_sentences(path: str, segments: int = WP_SEGMENTS, num_proc: int | None = None) -> list[list[str]]:
    """Each story of the file as its normalised sentences (stories with fewer than two dropped)."""
    stories = load_stories(path, segments=segments).filter(lambda row: bool(row["text"]))
    sentences = stories.map(
        lambda batch: {"sentences": [story_sentences(text) for text in batch["text"]]},
        batched=True,
        num_proc=num_proc,
        remove_columns=stories.column_names,
        desc=f"Normalising {pathlib.Path(path).name}",
    )["sentences"]
    return [story for story in sentences if len(story) >= 2]


def split_held_out(
    stories: Sequence[Sequence[str]], every: int = HELD_OUT_EVERY
) -> tuple[list[Sequence[str]], list[Sequence[str]]]:
    """The stories kept for training and counts, and the held-out ones (:func:`is_held_out`)."""
    kept = [story for index, story in enumerate(stories) if not is_held_out(index, every)]
    held = [story for index, story in enumerate(stories) if is_held_out(index, every)]
    return kept, held
