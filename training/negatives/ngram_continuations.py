"""Negatives that read like a weak story generator: a story's opening continued by an n-gram model.

UNION's corruptions edit a human story in place; generated stories instead run on fluently, word
by word, and lose their thread (or loop). A back-off n-gram model of the corpus's own human
stories makes such text in seconds on a CPU, where a neural story LM takes a GPU. It is fitted
per fold: the stories of one parity of ``story_index`` are continued by the model of the other
parity's stories, so no story is continued by a model that read it. Or it is fitted once on
other human stories (``model_stories``), the ones opening like a story of the corpus left out:
a few thousand stories make a sparse model that recites, tens of thousands one that drifts.

Sampling: the longest history (up to ``order - 1`` words) that the fold's text continued in at
least ``min_choices`` different ways is used, else a shorter one, down to the unigram table;
the next word is drawn in proportion to its count after that history. With one choice enough
(the default) the text runs on in stretches of other stories, joined where they share a
history: locally fluent, drifting from one story to the next, as a weak generator drifts.
Asking for two or more choices backs off more often and gives word salad.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import logging
import pathlib
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import datasets
import numpy as np
from datasets.fingerprint import Hasher

from story_quality.union.normalization import SENTENCE_STOPS

logger = logging.getLogger(__name__)
GENERATED_NGRAM = "generated:ngram"
START = "<s>"


@dataclass(frozen=True)
class NgramOptions:
    """How continuations are drawn; defaults are the shipped recipe's."""

    order: int = 4
    min_choices: int = 1
    # A continuation runs to about the original story's length, then to the next sentence end;
    # this many words past the length at most.
    overrun_words: int = 40

    def __post_init__(self) -> None:
        if not isinstance(self.order, int) or self.order < 2:
            raise ValueError(f"order must be an integer of at least 2, got {self.order!r}")
        if not isinstance(self.min_choices, int) or self.min_choices < 1:
            raise ValueError(f"min_choices must be a positive integer, got {self.min_choices!r}")
        if not isinstance(self.overrun_words, int) or self.overrun_words < 0:
            raise ValueError(f"overrun_words must be a non-negative integer, got {self.overrun_words!r}")


class _Table:
    """The words seen after one history, with cumulative counts for drawing."""

    __slots__ = ("cumulative", "words")

    def __init__(self, counts: Counter[str]) -> None:
        self.words = sorted(counts)
        self.cumulative = list(itertools.accumulate(counts[w] for w in self.words))

    def draw(self, rng: np.random.Generator, sharpness: float = 1.0) -> str:
        """A word in proportion to its count (to its count to the power ``sharpness``: above 1, the
        frequent continuations are drawn more often still, as a low sampling temperature does)."""
        if sharpness == 1.0:
            point = rng.random() * self.cumulative[-1]
            return self.words[bisect.bisect_right(self.cumulative, point)]
        counts = np.diff(self.cumulative, prepend=0) ** float(sharpness)
        return self.words[int(rng.choice(len(self.words), p=counts / counts.sum()))]


class NgramModel:
    """A back-off n-gram model of whitespace-tokenised texts."""

    def __init__(self, texts: Iterable[str], options: NgramOptions = NgramOptions()) -> None:
        self.options = options
        counts: list[defaultdict[tuple[str, ...], Counter[str]]] = [
            defaultdict(Counter) for _ in range(options.order)
        ]
        for text in texts:
            words = [START] * (options.order - 1) + text.split()
            for position in range(options.order - 1, len(words)):
                for size in range(options.order):
                    counts[size][tuple(words[position - size : position])][words[position]] += 1
        if not counts[0]:
            raise ValueError("an n-gram model needs at least one word of text")
        # Keep only the histories with enough choices; the unigram table always stays.
        self._tables = [
            {
                history: _Table(following)
                for history, following in by_history.items()
                if size == 0 or len(following) >= options.min_choices
            }
            for size, by_history in enumerate(counts)
        ]

    def next_word(self, history: Sequence[str], rng: np.random.Generator, sharpness: float = 1.0) -> str:
        for size in range(min(len(history), self.options.order - 1), -1, -1):
            table = self._tables[size].get(tuple(history[len(history) - size :]) if size else ())
            if table is not None:
                return table.draw(rng, sharpness)
        raise AssertionError("the unigram table is never empty")

    def continue_text(self, opening: str, words: int, rng: np.random.Generator) -> str:
        """About ``words`` words after ``opening``, ended at a sentence end (or cut ``overrun_words`` later)."""
        history = [START] * (self.options.order - 1) + opening.split()
        out: list[str] = []
        while len(out) < words + self.options.overrun_words:
            word = self.next_word(history, rng)
            history.append(word)
            out.append(word)
            if len(out) >= words and word in SENTENCE_STOPS:
                break
        return " ".join(out)


def _fold(story_index: int) -> int:
    return story_index % 2


def stories_opening_elsewhere(
    stories: Iterable[Sequence[str]], contexts: Collection[str]
) -> tuple[list[str], int]:
    """The texts of ``stories`` (each a list of normalised sentences) whose first sentence is none
    of ``contexts`` (the corpus's openings, an evaluation set's), and how many were left out: a
    model of them never read a story it continues."""
    kept: list[str] = []
    dropped = 0
    for sentences in stories:
        if not sentences:
            continue
        if sentences[0] in contexts:
            dropped += 1
        else:
            kept.append(" ".join(sentences))
    return kept, dropped


def replace_with_ngram_continuations(
    corpus: datasets.Dataset,
    fraction: float,
    seed: int,
    options: NgramOptions = NgramOptions(),
    model_texts: Sequence[str] | None = None,
) -> tuple[datasets.Dataset, int]:
    """``corpus`` with about ``fraction`` of its corrupted rows replaced by n-gram continuations.

    A replaced row keeps its story's context (sentence 0) and continues it, by the model of the
    other fold's human stories (or, given ``model_texts``, by one model of those normalised
    texts, which the caller keeps apart from the corpus: :func:`stories_opening_elsewhere`), to
    about the human story's length; its ``corruptions`` become ``["generated:ngram"]``. Which
    rows are replaced and what they say depends only on ``seed``, the corpus and the model's
    texts, so a rebuild gives the same rows. Returns the corpus and the rows replaced.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction!r}")
    if fraction == 0.0 or len(corpus) == 0:
        return corpus, 0
    if model_texts is not None:
        if not model_texts:
            raise ValueError("model_texts is empty: no story left to fit the n-gram model on")
        logger.info("Fitting one %d-gram model on %d other stories", options.order, len(model_texts))
        external = NgramModel(model_texts, options)
        models = [external, external]
    else:
        columns = corpus.select_columns(["text", "label", "story_index"]).to_dict()
        humans: dict[int, str] = {}
        for text, label, index in zip(columns["text"], columns["label"], columns["story_index"], strict=True):
            if label == 1:
                humans.setdefault(index, text)
        models = []
        for fold in (0, 1):
            logger.info(
                "Fitting the %d-gram model that continues the stories of fold %d of 2", options.order, fold
            )
            models.append(
                NgramModel((text for index, text in humans.items() if _fold(index) != fold), options)
            )

    def replace(row: dict, position: int) -> dict:
        if row["label"] != 0:
            return row
        rng = np.random.default_rng([seed, position])
        if rng.random() >= fraction:
            return row
        length = len(row["original"].split()) - len(row["context"].split())
        sample = models[_fold(row["story_index"])].continue_text(row["context"], max(length, 1), rng)
        return {**row, "text": f"{row['context']} {sample}", "corruptions": [GENERATED_NGRAM]}

    out = corpus.map(
        replace,
        with_indices=True,
        desc="Continuing stories with the n-gram model",
        # Hashing the models to fingerprint the map would take longer than drawing the samples.
        new_fingerprint=Hasher.hash(
            [
                corpus._fingerprint,
                fraction,
                seed,
                options,
                pathlib.Path(__file__).read_bytes(),
                None if model_texts is None else hashlib.sha256("\n".join(model_texts).encode()).hexdigest(),
            ]
        ),
    )
    replaced = sum(names == [GENERATED_NGRAM] for names in out["corruptions"])
    return out, replaced
