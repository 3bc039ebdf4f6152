"""Fluent negatives: stories whose every sentence reads well but whose thread is broken.

UNION's corruptions edit a story in place and rarely read fluently; the errors people mark in
generated stories are mostly unrelated and conflicting content. So, for each human story of a
built corpus, three kinds of candidate keep every sentence a human wrote and lose the thread:

* ``neighbour_sentences``: k ~ U{1..ceil((L-1)/2)} of the later sentences (sentence 0 kept), each
  replaced by one of its ``neighbours`` nearest sentences of other stories (cosine of frozen
  sentence embeddings, :mod:`.sentence_embeddings`; a sentence of the same text is never its own
  neighbour): on topic, in the story's register, but not what happens next;
* ``splice``: the story's first half (its opening included) joined to the second half of a story
  whose opening is among its ``neighbours`` nearest: the other story's ending, on a similar prompt;
* ``prompt_swap`` (WritingPrompts texts only): the story under the prompt of one of those near
  stories, a near but wrong prompt. A ROC story's first sentence is an ordinary sentence of the
  story, and a near one mostly fits what follows: such "negatives" are the ones filtering keeps.

Each story gets ``draws`` candidates of each kind. Then adversarial filtering (as in MANPLTS and
CoUDA): a UNION checkpoint (the shipped default) scores every candidate, and each story keeps the
``keep`` candidates it rates most human-written.
They take the place of a share of the corpus's corrupted copies (corruption ``generated:fluent``),
as the story LM's samples do (:func:`.copy_replacement.replace_negatives`); copies another kind of
generated negative already replaced are left as they are. Which candidates a story gets depends
only on the seed, the corpus and the embeddings: each story draws from its own generator,
``numpy.random.default_rng([seed, story_index])``, so ``num_proc`` changes nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import datasets
import numpy as np

from story_quality.training.negatives.copy_replacement import GENERATED
from story_quality.training.negatives.lm_continuations import ROC_MAX_SENTENCES, ROC_MAX_WORDS
from story_quality.union.normalization import SENTENCE_STOPS

FLUENT = f"{GENERATED}:fluent"  # the corruption name replaced rows carry
KINDS = ("neighbour_sentences", "splice", "prompt_swap")
# Tokens that close a sentence after its stop (``. ''``) belong to it.
_CLOSERS = frozenset({"''", "'", '"', ")", "]", "-rrb-", "-rsb-"})


@dataclasses.dataclass(frozen=True)
class FluentOptions:
    """How candidates are drawn and how many a story keeps; defaults are the recipe's."""

    neighbours: int = 5  # nearest sentences (or openings) a replacement is drawn among
    keep: int = 2  # candidates a story keeps after adversarial filtering
    kinds: tuple[str, ...] = KINDS
    draws: int = 2  # candidates of each kind a story gets (fewer where draws coincide)

    def __post_init__(self) -> None:
        for name in ("neighbours", "keep", "draws"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        unknown = [kind for kind in self.kinds if kind not in KINDS]
        if unknown or not self.kinds or len(set(self.kinds)) != len(self.kinds):
            raise ValueError(f"kinds must be distinct names among {list(KINDS)}, got {list(self.kinds)}")
        drawn = self.draws * len(self.kinds)  # the most candidates a story gets
        if self.keep > drawn:
            raise ValueError(
                f"--keep {self.keep} is above the {drawn} candidates a story is drawn at most (--draws "
                f"{self.draws} x {len(self.kinds)} kinds): every candidate would be kept and the filter "
                f"would do nothing; pass --keep at most {drawn} (below it to filter), or raise --draws."
            )


def split_sentences(text: str, context: str) -> list[str]:
    """A built row's text as sentences: its ``context`` (sentence 0, as the build cut it), then the
    rest cut after each sentence stop (closing quotes and brackets stay with their sentence).

    >>> split_sentences("a b . c d ! '' e f . g", "a b .")
    ['a b .', "c d ! ''", 'e f .', 'g']
    """
    if not text.startswith(context):
        raise ValueError(f"the row's text does not open with its context {context[:60]!r}")
    words = text[len(context) :].split()
    sentences, current, ended = [context], [], False
    for position, word in enumerate(words):
        current.append(word)
        ended = ended or word in SENTENCE_STOPS
        following = words[position + 1] if position + 1 < len(words) else None
        if ended and following not in _CLOSERS:
            sentences.append(" ".join(current))
            current, ended = [], False
    if current:
        sentences.append(" ".join(current))
    return sentences


@dataclasses.dataclass
class StoryTable:
    """The corpus's human stories as sentences, and the same sentences flattened (the rows of the
    embedding matrix): ``owner`` is each flat sentence's story, ``first`` each story's sentence 0."""

    story_index: list[int]
    sentences: list[list[str]]
    flat: list[str] = dataclasses.field(init=False)
    owner: np.ndarray = dataclasses.field(init=False)
    first: np.ndarray = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        lengths = np.array([len(story) for story in self.sentences], dtype=np.int64)
        self.flat = [sentence for story in self.sentences for sentence in story]
        self.owner = np.repeat(np.arange(len(self.sentences)), lengths)
        self.first = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def human_stories(corpus: datasets.Dataset) -> StoryTable:
    """One entry per story of ``corpus`` (its first human row), in ``story_index`` order."""
    columns = corpus.select_columns(["text", "label", "context", "story_index"]).to_dict()
    stories: dict[int, list[str]] = {}
    for text, label, context, index in zip(
        columns["text"], columns["label"], columns["context"], columns["story_index"], strict=True
    ):
        if label == 1 and index not in stories:
            stories[index] = split_sentences(text, context)
    if not stories:
        raise ValueError("the corpus has no human rows: nothing to make fluent negatives of")
    order = sorted(stories)
    return StoryTable(order, [stories[index] for index in order])


def nearest_others(
    matrix: np.ndarray, owner: np.ndarray, texts: Sequence[str], k: int, chunk: int = 1024
) -> np.ndarray:
    """For each row of ``matrix`` (unit vectors), the ``k`` rows of highest cosine that belong to
    another ``owner`` and hold another text, best first (ties: the lower row); -1 pads a row with
    fewer such neighbours."""
    text_id = np.unique(np.asarray(texts, dtype=object), return_inverse=True)[1]
    n = len(matrix)
    out = np.full((n, k), -1, dtype=np.int64)
    take = min(k, n)
    for start in range(0, n, chunk):
        rows = slice(start, min(start + chunk, n))
        similar = matrix[rows] @ matrix.T
        same = (owner[rows, None] == owner[None, :]) | (text_id[rows, None] == text_id[None, :])
        similar[same] = -np.inf
        best = np.argpartition(-similar, take - 1, axis=1)[:, :take]
        for offset, candidates in enumerate(best):
            scores = similar[offset, candidates]
            ranked = candidates[np.lexsort((candidates, -scores))]
            ranked = ranked[np.isfinite(similar[offset, ranked])][:k]
            out[start + offset, : len(ranked)] = ranked
    return out


@dataclasses.dataclass
class Neighbours:
    """Nearest sentences of other stories (by flat sentence) and nearest other openings (by story)."""

    sentences: np.ndarray  # (flat sentences, neighbours) flat ids
    stories: np.ndarray  # (stories, neighbours) story positions

    @classmethod
    def of(cls, table: StoryTable, embeddings: np.ndarray, neighbours: int) -> Neighbours:
        flat, owner, first = table.flat, table.owner, table.first
        if len(embeddings) != len(flat):
            raise ValueError(f"{len(embeddings)} embeddings for {len(flat)} sentences")
        by_sentence = nearest_others(embeddings, owner, flat, neighbours)
        openings = [flat[i] for i in first]
        by_story = nearest_others(embeddings[first], np.arange(len(first)), openings, neighbours)
        return cls(by_sentence, by_story)


def _pick(rng: np.random.Generator, choices: np.ndarray) -> int | None:
    valid = choices[choices >= 0]
    return int(valid[rng.integers(len(valid))]) if len(valid) else None


def is_writing_prompt(sentences: Sequence[str]) -> bool:
    """Whether a story is longer than a ROC story can be (then a WritingPrompts text, its prompt first)."""
    words = sum(len(sentence.split()) for sentence in sentences)
    return len(sentences) > ROC_MAX_SENTENCES or words > ROC_MAX_WORDS


def neighbour_sentences(
    position: int, table: StoryTable, near: Neighbours, rng: np.random.Generator
) -> list[str]:
    """k ~ U{1..ceil((L-1)/2)} later sentences, each replaced by one of its nearest of other stories."""
    mine, start = table.sentences[position], int(table.first[position])
    later = len(mine) - 1
    count = int(rng.integers(1, math.ceil(later / 2) + 1))
    text = list(mine)
    for place in sorted(int(i) + 1 for i in rng.choice(later, size=count, replace=False)):
        picked = _pick(rng, near.sentences[start + place])
        if picked is not None:
            text[place] = table.flat[picked]
    return text


def with_near_story(
    kind: str, position: int, table: StoryTable, near: Neighbours, rng: np.random.Generator
) -> list[str] | None:
    """``splice`` or ``prompt_swap`` with one of the stories whose opening is nearest."""
    mine = table.sentences[position]
    if kind == "prompt_swap" and not is_writing_prompt(mine):
        return None
    donor = _pick(rng, near.stories[position])
    if donor is None:
        return None
    theirs = table.sentences[donor]
    if kind == "splice":
        return mine[: math.ceil(len(mine) / 2)] + theirs[math.ceil(len(theirs) / 2) :]
    return [theirs[0], *mine[1:]]


def candidates_of(
    position: int, table: StoryTable, near: Neighbours, rng: np.random.Generator, options: FluentOptions
) -> list[tuple[str, str]]:
    """The distinct candidates (kind, text) of the story at ``position`` in ``table``: ``draws`` of
    each kind, in kind order; a draw that changes nothing or repeats an earlier one is dropped."""
    mine = table.sentences[position]
    seen, out = {" ".join(mine)}, []
    for kind in options.kinds:
        for _ in range(options.draws):
            if kind == "neighbour_sentences":
                drawn = neighbour_sentences(position, table, near, rng)
            else:
                drawn = with_near_story(kind, position, table, near, rng)
            text = None if drawn is None else " ".join(drawn)
            if text is not None and text not in seen:
                seen.add(text)
                out.append((kind, text))
    return out


def build_candidates(
    table: StoryTable, near: Neighbours, seed: int, options: FluentOptions, fingerprint: str
) -> datasets.Dataset:
    """One row per story: ``story_index``, ``candidates`` and their ``kinds`` (datasets.map, seeded
    per story, so the rows do not depend on how the work is split)."""
    stories = datasets.Dataset.from_dict(
        {"story_index": table.story_index, "position": list(range(len(table.story_index)))}
    )

    def draw(row: dict[str, Any]) -> dict[str, Any]:
        rng = np.random.default_rng([seed, row["story_index"]])
        found = candidates_of(row["position"], table, near, rng, options)
        return {"candidates": [text for _, text in found], "kinds": [kind for kind, _ in found]}

    return stories.map(draw, desc="Drawing fluent candidates", new_fingerprint=fingerprint)


def most_human(
    candidates: datasets.Dataset, scores: Sequence[float], keep: int
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """Each story's ``keep`` candidates of highest P(human) (``scores`` in the candidates' flat
    order; ties: the earlier kind), as texts and as kinds, by ``story_index``."""
    texts: dict[int, list[str]] = {}
    kinds: dict[int, list[str]] = {}
    at = 0
    for row in candidates:
        found = len(row["candidates"])
        mine = list(scores[at : at + found])
        at += found
        order = sorted(range(found), key=lambda i: (-mine[i], i))[:keep]
        texts[row["story_index"]] = [row["candidates"][i] for i in order]
        kinds[row["story_index"]] = [row["kinds"][i] for i in order]
    if at != len(scores):
        raise ValueError(f"{len(scores)} scores for {at} candidates")
    return texts, kinds
