"""A story's fluency from its sentences' scores, by any sentence reader: (c)'s logits or (b)'s SLOR.

A sentence reader is a folder: a fluency classifier (:mod:`story_quality.fluency.reader`, each
sentence's ``human - generated`` logit) or a SLOR trigram model (:mod:`story_quality.fluency.slor`).
Each story's sentences (:func:`story_quality.fluency.text.read_sentences`) are scored, then the
story is scored by one of :data:`STORY_SCORES`:

- ``mean``: the mean of its sentence scores;
- ``second-lowest``: its second-lowest sentence score (the lowest in a one-sentence story),
  a text judged by its worst sentences;
- ``mean-percentile`` / ``second-lowest-percentile``: the same of each sentence's percentile among
  human sentences of its length (:mod:`story_quality.fluency.percentiles`, the table in the folder).

Every sentence is scored apart, so a story scores the same alone and in any batch.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from story_quality.fluency.percentiles import PercentileTable
from story_quality.fluency.reader import FluencyReader, NotAFluencyReader, reader_problem
from story_quality.fluency.slor import SlorModel, slor_problem
from story_quality.fluency.text import read_sentences

STORY_SCORES = ("mean", "second-lowest", "mean-percentile", "second-lowest-percentile")
SentenceScorer = Callable[[Sequence[str]], np.ndarray]


def sentence_scorer(folder: str | os.PathLike) -> SentenceScorer:
    """The sentence scorer a folder holds: a fluency classifier's logits or a SLOR model's SLOR."""
    if not pathlib.Path(folder).is_dir():
        raise NotAFluencyReader(f"not a sentence reader: {folder} is not a folder")
    if reader_problem(folder) is None:
        return FluencyReader(folder).sentence_logits
    if slor_problem(folder) is None:
        return SlorModel.read(folder).sentence_slor
    raise NotAFluencyReader(
        f"not a sentence reader: {reader_problem(folder)}; nor a SLOR reader: {slor_problem(folder)}"
    )


@dataclass(frozen=True)
class StorySentences:
    """One story as a sentence reader saw it: each sentence's score and length in words."""

    scores: tuple[float, ...]
    lengths: tuple[int, ...]


def read_stories(score: SentenceScorer, texts: Sequence[str]) -> list[StorySentences]:
    """Every story's sentence scores, all its sentences read in one call of ``score``."""
    stories = [read_sentences(text) for text in texts]
    flat = np.asarray(score([sentence for story in stories for sentence in story]), dtype=np.float64)
    bounds = np.cumsum([0] + [len(story) for story in stories])
    return [
        StorySentences(tuple(flat[a:b].tolist()), tuple(len(sentence.split()) for sentence in story))
        for story, a, b in zip(stories, bounds[:-1], bounds[1:], strict=True)
    ]


def story_score(story: StorySentences, kind: str, table: PercentileTable | None = None) -> float:
    """The story's fluency by ``kind`` (one of :data:`STORY_SCORES`)."""
    if kind not in STORY_SCORES:
        raise ValueError(f"unknown story score {kind!r}; one of {', '.join(STORY_SCORES)}")
    values = np.asarray(story.scores, dtype=np.float64)
    if kind.endswith("-percentile"):
        if table is None:
            raise ValueError(f"the story score {kind!r} needs a percentile table")
        values = table.percentiles(story.scores, story.lengths)
    if kind.startswith("second-lowest"):
        return float(np.sort(values)[min(1, len(values) - 1)])
    return float(np.mean(values))
