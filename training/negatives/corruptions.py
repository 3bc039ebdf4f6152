"""UNION's four corruptions (repetition, substitution, reordering, negation) and one of ours, applied cumulatively.

A story is a list of sentences, each ``(tokens, tags)``; sentence 0 is the context and is
never touched. ``L`` below is the number of sentences including sentence 0 (5 for
ROCStories), as in the technique table of the UNION paper (Guan & Huang, EMNLP 2020):

* number of techniques n ~ {1: .5, 2: .2, 3: .2, 4: .1}; n distinct techniques drawn from
  {repetition: .1, substitution: .3, reordering: .4, negation: .2} without replacement;
  applied one after another in the order drawn;
* repetition (70 %): one later sentence copied over ``min(1 + L // 2, L - 2)`` other later
  sentences; (30 %): ``L // 2`` times an n-gram (n uniform in 1..4) of a later sentence is
  duplicated in place (``a b c`` -> ``a b b c``), final punctuation excluded;
* substitution (50 %): k ~ U{1..L-1} later sentences replaced by sentences of another
  story of the corpus;
  (50 %): m ~ U{1..max(1, floor(.15 K))} of the K keywords replaced, by an antonym when one is known, else by a keyword with the same POS tag drawn by corpus
  frequency;
* reordering: k ~ U{2..L-1} later sentences permuted, redrawn until the order changed;
* negation: k ~ U{1..L-1} later sentences (among those a rule applies to) negated, see
  :mod:`training.negatives.negation`;
* ``CorruptionContext.technique_probs`` replaces the paper's technique weights (a technique of
  weight 0 is never drawn, so the paper's weights give exactly the paper's draws).
* grammar (an addition of ours, weight 0 in the paper's recipe): one grammar-breaking edit of
  :mod:`training.negatives.grammar` (words dropped, doubled, swapped, agreement broken, a
  degenerate loop) in k ~ U{1..max(1, (L-1)//2)} later sentences, each edit inside its sentence;
  ``--technique-probs ...,grammar=W`` switches it on.

Negatives written rather than edited (continuations of the story's opening by a story LM,
:mod:`training.negatives.copy_replacement`, or by an n-gram model,
:mod:`training.negatives.ngram_continuations`) replace a share of the corrupted copies after the
build (``training/generated_negatives.py``, ``--ngram-fraction``, ``training/fluent_negatives.py``).

A technique that cannot change the story (no keyword, no verb, a one-story corpus) is not
recorded; if the story came out unchanged, the unused techniques of positive weight are tried
in a weighted order until one changes it.

Randomness comes only from :meth:`random.Random.random`, whose sequence Python guarantees
for a given seed across versions; choices, samples and shuffles are built on it here.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from story_quality.training.negatives import grammar
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.training.negatives.negation import negate

TECHNIQUE_COUNT_PROBS: dict[int, float] = {1: 0.5, 2: 0.2, 3: 0.2, 4: 0.1}
TECHNIQUE_PROBS: dict[str, float] = {
    "repetition": 0.1,
    "substitution": 0.3,
    "reordering": 0.4,
    "negation": 0.2,
}
GRAMMAR = "grammar"
SENTENCE_REPETITION_PROB = 0.7
SENTENCE_SUBSTITUTION_PROB = 0.5
KEYWORD_FRACTION = 0.15
MAX_NGRAM = 4
MAX_RETRIES = 20
TRAILING_PUNCTUATION = frozenset({".", "!", "?", "''", "``", '"', "'", ",", ":", ";"})

Sentence = tuple[list[str], list[str]]


class StoryRandom:
    """Seeded draws built only on ``random()`` (stable across Python versions).

    The seed is a string ``"{seed}:{story_index}"``: a story's corruption depends on nothing
    else, so the corpus is the same for any ``num_proc`` and batch size.
    """

    def __init__(self, seed: int, story_index: int) -> None:
        self._random = random.Random(f"{seed}:{story_index}").random

    def index(self, n: int) -> int:
        """Uniform integer in ``0..n-1``."""
        return min(int(self._random() * n), n - 1)

    def between(self, low: int, high: int) -> int:
        """Uniform integer in ``low..high`` (inclusive)."""
        return low + self.index(high - low + 1)

    def chance(self, p: float) -> bool:
        return self._random() < p

    def weighted(self, weights: Sequence[float]) -> int:
        """Index drawn with probability proportional to ``weights``."""
        cumulative, total = [], 0.0
        for weight in weights:
            total += weight
            cumulative.append(total)
        return min(bisect.bisect_right(cumulative, self._random() * total), len(weights) - 1)

    def sample(self, population: Sequence[int], k: int) -> list[int]:
        """``k`` distinct items in draw order (partial Fisher-Yates)."""
        pool = list(population)
        for i in range(k):
            j = i + self.index(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def shuffle(self, items: list) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.index(i + 1)
            items[i], items[j] = items[j], items[i]


@dataclasses.dataclass(frozen=True)
class KeywordTable:
    """Keywords of the corpus by POS tag with their counts: substitution's frequency-weighted pool."""

    words: dict[str, tuple[str, ...]]
    cumulative: dict[str, tuple[int, ...]]

    @classmethod
    def from_counts(cls, counts: dict[tuple[str, str], int]) -> KeywordTable:
        """From ``{(tag, word): count}``; words sorted by (-count, word) so the table is deterministic."""
        by_tag: dict[str, list[tuple[int, str]]] = {}
        for (tag, word), count in counts.items():
            by_tag.setdefault(tag, []).append((-count, word))
        words, cumulative = {}, {}
        for tag, entries in sorted(by_tag.items()):
            entries.sort()
            words[tag] = tuple(word for _, word in entries)
            running, totals = 0, []
            for negative_count, _ in entries:
                running -= negative_count
                totals.append(running)
            cumulative[tag] = tuple(totals)
        return cls(words, cumulative)

    def draw(self, tag: str, rng: StoryRandom, exclude: str) -> str | None:
        """A keyword with this tag drawn by corpus frequency, not ``exclude``; None if there is none."""
        words = self.words.get(tag, ())
        if not words or words == (exclude,):
            return None
        totals = self.cumulative[tag]
        for _ in range(MAX_RETRIES):
            target = rng.index(totals[-1])
            word = words[bisect.bisect_right(totals, target)]
            if word != exclude:
                return word
        return None


class DonorPool(Protocol):
    """The corpus, for sentence-level substitution: ``len`` and ``(story_index, sentences)`` by row."""

    def __len__(self) -> int: ...

    def story(self, row: int) -> tuple[int, list[Sentence]]: ...


@dataclasses.dataclass
class CorruptionContext:
    lexicon: Lexicon
    keywords: KeywordTable
    donors: DonorPool
    story_index: int
    technique_probs: Mapping[str, float] | None = None  # None: the paper's TECHNIQUE_PROBS


Technique = Callable[[list[Sentence], StoryRandom, CorruptionContext], tuple[list[Sentence], str] | None]


def _copy(story: list[Sentence]) -> list[Sentence]:
    return [(list(tokens), list(tags)) for tokens, tags in story]


def repeat(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    """Sentence repetition (70 %) or in-place n-gram duplication (30 %)."""
    length, later = len(story), list(range(1, len(story)))
    story = _copy(story)
    if rng.chance(SENTENCE_REPETITION_PROB):
        if len(later) < 2:
            return None
        source = later[rng.index(len(later))]
        others = [i for i in later if i != source]
        for target in rng.sample(others, min(1 + length // 2, len(others))):
            story[target] = (list(story[source][0]), list(story[source][1]))
        return story, "repetition:sentence"
    candidates = [i for i in later if _word_span(story[i][0]) > 0]
    if not candidates:
        return None
    for _ in range(max(1, length // 2)):
        tokens, tags = story[candidates[rng.index(len(candidates))]]
        span = _word_span(tokens)
        n = min(rng.between(1, MAX_NGRAM), span)
        start = rng.index(span - n + 1)
        tokens[start + n : start + n] = tokens[start : start + n]
        tags[start + n : start + n] = tags[start : start + n]
    return story, "repetition:ngram"


def _word_span(tokens: list[str]) -> int:
    """Number of leading tokens an n-gram may come from (final punctuation excluded)."""
    end = len(tokens)
    while end > 0 and tokens[end - 1] in TRAILING_PUNCTUATION:
        end -= 1
    return end


def substitute(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    """Sentences from another story (50 %) or keywords by antonym / same-POS keyword (50 %)."""
    if rng.chance(SENTENCE_SUBSTITUTION_PROB):
        return _substitute_sentences(story, rng, ctx)
    return _substitute_words(story, rng, ctx)


def _substitute_sentences(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    later = list(range(1, len(story)))
    k = rng.between(1, len(later))
    donor: list[Sentence] | None = None
    for _ in range(MAX_RETRIES):
        if len(ctx.donors) == 0:
            break
        row = rng.index(len(ctx.donors))
        index, sentences = ctx.donors.story(row)
        if index != ctx.story_index and len(sentences) > 1:
            donor = sentences
            break
    if donor is None:
        return None
    donor_later = list(range(1, len(donor)))
    k = min(k, len(donor_later))
    story = _copy(story)
    for target, source in zip(rng.sample(later, k), rng.sample(donor_later, k), strict=True):
        story[target] = (list(donor[source][0]), list(donor[source][1]))
    return story, "substitution:sentence"


def _substitute_words(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    positions = [
        (i, j)
        for i in range(1, len(story))
        for j, (word, tag) in enumerate(zip(*story[i], strict=True))
        if ctx.lexicon.is_keyword(word, tag)
    ]
    if not positions:
        return None
    m = rng.between(1, max(1, int(KEYWORD_FRACTION * len(positions))))
    story = _copy(story)
    changed = False
    for pick in rng.sample(range(len(positions)), m):
        i, j = positions[pick]
        word, tag = story[i][0][j], story[i][1][j]
        antonyms = ctx.lexicon.antonyms_of(word, tag)
        if antonyms:
            replacement = antonyms[rng.index(len(antonyms))]
        else:
            replacement = ctx.keywords.draw(tag, rng, exclude=word.lower())
        if replacement is None:
            continue
        if word[:1].isupper():
            replacement = replacement[:1].upper() + replacement[1:]
        story[i][0][j] = replacement
        changed = True
    return (story, "substitution:word") if changed else None


def reorder(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    """Permute k ~ U{2..L-1} later sentences until their order changed."""
    later = list(range(1, len(story)))
    if len(later) < 2:
        return None
    positions = sorted(rng.sample(later, rng.between(2, len(later))))
    if len({tuple(story[i][0]) for i in positions}) < 2:
        return None
    order = list(positions)
    for _ in range(MAX_RETRIES):
        rng.shuffle(order)
        if [story[i][0] for i in order] != [story[i][0] for i in positions]:
            new = _copy(story)
            for target, source in zip(positions, order, strict=True):
                new[target] = (list(story[source][0]), list(story[source][1]))
            return new, "reordering"
    return None


def negate_sentences(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    """Negate k ~ U{1..L-1} later sentences (those a negation rule applies to)."""
    k = rng.between(1, len(story) - 1)
    negated = {i: negate(*story[i], ctx.lexicon.lemma) for i in range(1, len(story))}
    candidates = [i for i, result in negated.items() if result is not None]
    if not candidates:
        return None
    story = _copy(story)
    for i in rng.sample(candidates, min(k, len(candidates))):
        story[i] = negated[i]  # type: ignore[assignment]
    return story, "negation"


def break_grammar(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], str] | None:
    """One edit of :data:`grammar.EDITS`, drawn for the story, applied to k ~ U{1..max(1, (L-1)//2)}
    later sentences (in a random order, skipping those it cannot change); labelled ``grammar:EDIT``."""
    later = list(range(1, len(story)))
    if not later:
        return None
    names = list(grammar.EDITS)
    name = names[rng.index(len(names))]
    k = rng.between(1, max(1, len(later) // 2))
    story = _copy(story)
    changed = 0
    for target in rng.sample(later, len(later)):
        tokens, tags = story[target]
        result = grammar.EDITS[name](tokens, tags, _word_span(tokens), rng)
        if result is not None and result[0] != tokens:
            story[target] = result
            changed += 1
            if changed == k:
                break
    return (story, f"{GRAMMAR}:{name}") if changed else None


TECHNIQUES: dict[str, Technique] = {
    "repetition": repeat,
    "substitution": substitute,
    "reordering": reorder,
    "negation": negate_sentences,
    GRAMMAR: break_grammar,
}


def check_technique_probs(probs: Mapping[str, float]) -> dict[str, float]:
    """``probs`` as a plain dict in TECHNIQUES order, or a ValueError naming what is wrong."""
    unknown = sorted(set(probs) - set(TECHNIQUES))
    if unknown:
        raise ValueError(f"unknown corruption technique(s) {unknown}; known: {list(TECHNIQUES)}")
    for name, weight in probs.items():
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight >= 0):
            raise ValueError(f"technique weight {name}={weight!r} must be a finite number >= 0")
    if not any(probs.values()):
        raise ValueError(f"at least one technique needs a positive weight, got {dict(probs)}")
    return {name: float(probs[name]) for name in TECHNIQUES if name in probs}


def parse_technique_probs(text: str) -> dict[str, float]:
    """``"repetition=0.1,grammar=0.15,..."`` (the command-line form) as checked weights.

    Techniques left out get weight 0.
    """
    probs: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            weight = float(value)
        except ValueError:
            raise ValueError(f"technique weight {item!r} is not NAME=NUMBER") from None
        name = name.strip()
        if name in probs:
            raise ValueError(f"technique {name!r} is given twice")
        probs[name] = weight
    return check_technique_probs(probs)


def draw_techniques(rng: StoryRandom, probs: Mapping[str, float] = TECHNIQUE_PROBS) -> list[str]:
    """n ~ TECHNIQUE_COUNT_PROBS distinct techniques, weighted by ``probs``, in draw order."""
    counts = list(TECHNIQUE_COUNT_PROBS)
    n = counts[rng.weighted([TECHNIQUE_COUNT_PROBS[c] for c in counts])]
    return _weighted_order(rng, _active(probs), n, probs)


def _active(probs: Mapping[str, float]) -> list[str]:
    return [name for name in TECHNIQUES if probs.get(name, 0) > 0]


def _weighted_order(rng: StoryRandom, names: list[str], n: int, probs: Mapping[str, float]) -> list[str]:
    names, chosen = list(names), []
    for _ in range(min(n, len(names))):
        chosen.append(names.pop(rng.weighted([probs[name] for name in names])))
    return chosen


def corrupt(
    story: list[Sentence], rng: StoryRandom, ctx: CorruptionContext
) -> tuple[list[Sentence], list[str]]:
    """The corrupted story and the names of the techniques applied, in order.

    The applied list is empty only when no technique could change the story.
    """
    probs = TECHNIQUE_PROBS if ctx.technique_probs is None else ctx.technique_probs
    drawn = draw_techniques(rng, probs)
    current, applied = story, []
    for name in drawn:
        result = TECHNIQUES[name](current, rng, ctx)
        if result is not None:
            current, label = result
            applied.append(label)
    if _tokens(current) == _tokens(story):
        current, applied = story, []
        for name in (
            _weighted_order(rng, [n for n in _active(probs) if n not in drawn], len(TECHNIQUES), probs)
            + drawn
        ):
            result = TECHNIQUES[name](story, rng, ctx)
            if result is not None and _tokens(result[0]) != _tokens(story):
                return result[0], [result[1]]
    return current, applied


def _tokens(story: list[Sentence]) -> list[list[str]]:
    return [tokens for tokens, _ in story]


def technique_probs_argument(text: str) -> dict[str, float]:
    """argparse ``type=`` for ``--technique-probs``: the parse error becomes the usage message."""
    try:
        return parse_technique_probs(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
