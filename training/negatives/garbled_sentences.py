"""Sentence pairs for the fluency reader: a human sentence, and a weak generator's sentence in its place.

Each human sentence (normalised by :mod:`story_quality.fluency.text`) is paired with a sentence
an n-gram model writes on the same story's preceding words and the same first two words, at least
as long and ended where the model ends a sentence (so neither a short length nor a cut phrase
tells them apart). The model is fitted per fold: a story of one parity of its index is continued by the model of the
other parity's stories, so it never recites the sentence it replaces; a generated sentence that
equals any human sentence of the corpus is dropped. Each generated sentence draws its history
size and sharpness from ``history_weights``: word salad, locally fluent drift, and generic text.

Label 1 is human, 0 generated (UNION's convention: the higher class is the human one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from story_quality.training.negatives.ngram_continuations import START, NgramModel, NgramOptions
from story_quality.union.normalization import SENTENCE_END, SENTENCE_STOPS

HUMAN, GENERATED = 1, 0


@dataclass(frozen=True)
class GarbleOptions:
    """How the generated sentences are drawn; defaults are the recipe's."""

    # (history size in words, share of the generated sentences, sharpness): a history of 1 word gives
    # word salad, 2 words locally fluent drift, 3 words at sharpness 2 (counts squared, as a low
    # temperature) generic text, the frequent phrases a weak generator falls back on.
    history_weights: tuple[tuple[int, float, float], ...] = ((1, 0.2, 1.0), (2, 0.4, 1.0), (3, 0.4, 2.0))
    prefix_words: int = 2  # the human sentence's first words the generated one starts with
    redraws: int = 8  # draws of a word that is not a sentence stop before the unigram table's
    overrun: int = 12  # words past the human sentence's length in which to find a stop

    def __post_init__(self) -> None:
        sizes = [size for size, _, _ in self.history_weights]
        if not sizes or min(sizes) < 1 or any(w <= 0 or sharp <= 0 for _, w, sharp in self.history_weights):
            raise ValueError(
                f"history_weights must pair sizes >= 1 with positive weights: {self.history_weights}"
            )
        if self.prefix_words < 0:
            raise ValueError(f"prefix_words must be >= 0, got {self.prefix_words}")

    @property
    def order(self) -> int:
        return max(size for size, _, _ in self.history_weights) + 1


def fold_models(stories: Sequence[Sequence[str]], options: GarbleOptions) -> tuple[NgramModel, NgramModel]:
    """The n-gram models of the even- and the odd-indexed stories (each a list of sentences)."""
    return tuple(  # type: ignore[return-value]
        NgramModel(
            (" ".join(sentences) for index, sentences in enumerate(stories) if index % 2 == fold),
            NgramOptions(order=options.order),
        )
        for fold in (0, 1)
    )


def garbled_sentence(
    model: NgramModel,
    context: Sequence[str],
    sentence: Sequence[str],
    history: int,
    options: GarbleOptions,
    rng: np.random.Generator,
    sharpness: float = 1.0,
) -> list[str]:
    """A sentence about as long as ``sentence`` (a list of words), opening with its first words and
    closing as it closes, drawn word by word after ``context``.

    The human sentence's tail (its last stop and any quotes after it, or its last token when it
    has no stop) is the generated one's too, so neither a closing quote nor a missing stop tells
    them apart. No stop is drawn before the human sentence's length; past it the sentence runs on
    to the model's next stop (at most ``overrun`` words more), so it ends where the model would
    end a sentence, not cut mid-phrase.
    """
    tail_start = len(sentence) - 1
    while (
        tail_start > 0 and sentence[tail_start] in SENTENCE_END and sentence[tail_start] not in SENTENCE_STOPS
    ):
        tail_start -= 1  # closing quotes after the stop
    if sentence[tail_start] not in SENTENCE_END:
        tail_start = len(sentence) - 1  # no stop: the last token alone
    tail = list(sentence[tail_start:])
    body = max(tail_start, 1)
    words = list(sentence[: min(options.prefix_words, body)])
    stream = [START] * (model.options.order - 1) + list(context) + words
    while len(words) < body + options.overrun:
        for attempt in range(options.redraws + 100):
            # past the redraws, the unigram table: a stop there is rare
            word = model.next_word(
                stream[len(stream) - history :] if attempt < options.redraws else [], rng, sharpness
            )
            if word not in SENTENCE_END or len(words) >= body and word in SENTENCE_STOPS:
                break
        if word in SENTENCE_STOPS:
            break
        words.append(word)
        stream.append(word)
    return words + tail


Chooser = Callable[[Sequence[Sequence[str]]], Sequence[int]]


def sentence_pairs(
    stories: Sequence[Sequence[str]],
    sentences_wanted: int,
    models: tuple[NgramModel, NgramModel],
    options: GarbleOptions,
    seed: int,
    human_sentences: frozenset[str] = frozenset(),
    candidates: int = 1,
    choose: Chooser | None = None,
) -> list[dict[str, object]]:
    """``sentences_wanted`` human sentences drawn from ``stories`` at random (without replacement), each
    followed by its generated counterpart: rows of ``text``, ``label``, ``story``, ``history``.

    ``models[f]`` continues the stories of the other fold; a generated sentence found in
    ``human_sentences`` is not a candidate. With ``candidates`` > 1 each human sentence gets that
    many generated ones and ``choose`` (given every pair's candidates) picks one per pair: the
    hardest negatives, those a first reader scores most human; a pair left with no candidate is
    dropped with its human sentence.
    """
    rng = np.random.default_rng(seed)
    places = [(s, i) for s, sentences in enumerate(stories) for i in range(len(sentences))]
    chosen = rng.choice(len(places), size=min(sentences_wanted, len(places)), replace=False)
    weights = np.array([weight for _, weight, _ in options.history_weights], dtype=float)
    drawn: list[tuple[int, int, list[tuple[str, int]]]] = []
    for place in sorted(chosen.tolist()):
        story, index = places[place]
        sentence = stories[story][index].split()
        context = " ".join(stories[story][:index]).split()
        model = models[1 - story % 2]
        options_here = []
        for _ in range(candidates):
            history, _, sharpness = options.history_weights[
                int(rng.choice(len(weights), p=weights / weights.sum()))
            ]
            generated = " ".join(garbled_sentence(model, context, sentence, history, options, rng, sharpness))
            if generated not in human_sentences and generated != stories[story][index]:
                options_here.append((generated, history))
        if options_here:
            drawn.append((story, index, options_here))
    picks = choose([[text for text, _ in found] for *_, found in drawn]) if choose else [0] * len(drawn)
    rows: list[dict[str, object]] = []
    for (story, index, found), pick in zip(drawn, picks, strict=True):
        generated, history = found[pick]
        rows.append({"text": stories[story][index], "label": HUMAN, "story": story, "history": 0})
        rows.append({"text": generated, "label": GENERATED, "story": story, "history": history})
    return rows
