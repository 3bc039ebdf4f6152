"""Focus: Word Mover Similarity of adjacent sentences, -0.1 when any pair falls below 0.05.

This is the paper's intent (the released code for it is broken). Each sentence is a
normalised bag of its word pieces (special tokens and pure punctuation left out), each
piece embedded by the masked LM's own input embedding matrix, so no extra model is
needed. The ground distance is the cosine distance between pieces, the Word Mover
Distance ``d`` is solved exactly with ``pyemd``, and the similarity is
``exp(-d / FOCUS_DISTANCE_SCALE)``.

The scale is calibrated (``benchmarks/calibrate_focus.py``) so that the paper's 0.05
threshold sits where adjacent sentences of one story part from sentences of two unrelated
stories; the figures are in the metric card.
"""

from __future__ import annotations

import functools
import math
import string
from collections import Counter
from collections.abc import Sequence, Set

import numpy as np
import pyemd
import torch

FOCUS_PENALTY = -0.1
FOCUS_THRESHOLD = 0.05
FOCUS_DISTANCE_SCALE = 0.254  # benchmarks/calibrate_focus.py on ROCStories, all-MiniLM-L6-v2 (see card)


@functools.lru_cache(maxsize=65536)
def is_punctuation(piece: str) -> bool:
    """Word pieces made of punctuation only (``##`` continuation marks ignored) carry no topic."""
    core = piece.removeprefix("##").lstrip("\u2581")
    return bool(core) and all(char in string.punctuation for char in core)


def content_pieces(token_ids: Sequence[int], tokenizer, special: Set[int] | None = None) -> list[int]:
    """The ids of a sentence's pieces that count for focus: no special tokens (``special``, else the
    tokenizer's, looked up again), no punctuation."""
    special = set(tokenizer.all_special_ids) if special is None else special
    pieces = tokenizer.convert_ids_to_tokens(list(token_ids))
    return [
        i
        for i, piece in zip(token_ids, pieces, strict=True)
        if i not in special and not is_punctuation(piece)
    ]


def word_mover_distance(a_ids: Sequence[int], b_ids: Sequence[int], embeddings: torch.Tensor) -> float:
    """Exact Word Mover Distance between two bags of token ids under cosine ground distance."""
    a_count, b_count = Counter(a_ids), Counter(b_ids)
    vocabulary = list(a_count) + list(b_count)
    # The cosine products in torch, whose threads are already running: numpy's own BLAS threads,
    # woken for each small product beside torch's, took 3x-4x as long inside a scoring call.
    vectors = torch.nn.functional.normalize(embeddings[vocabulary].double(), dim=-1)
    distance = (1.0 - vectors @ vectors.T).clamp_(min=0.0).fill_diagonal_(0.0).cpu().numpy()
    first = np.array([a_count[i] for i in a_count] + [0.0] * len(b_count), dtype=np.float64)
    second = np.array([0.0] * len(a_count) + [b_count[i] for i in b_count], dtype=np.float64)
    return float(pyemd.emd(first / first.sum(), second / second.sum(), np.ascontiguousarray(distance)))


def word_mover_similarity(a_ids: Sequence[int], b_ids: Sequence[int], embeddings: torch.Tensor) -> float:
    """``exp(-WMD / scale)`` in (0, 1]; 1 for two identical bags, and for an empty bag (nothing to compare)."""
    if not a_ids or not b_ids:
        return 1.0
    return math.exp(-word_mover_distance(a_ids, b_ids, embeddings) / FOCUS_DISTANCE_SCALE)


def focus_score(sentence_ids: Sequence[Sequence[int]], embeddings: torch.Tensor) -> float:
    """``-0.1`` if any two adjacent sentences are less similar than 0.05, else 0."""
    for a_ids, b_ids in zip(sentence_ids, sentence_ids[1:], strict=False):
        if word_mover_similarity(a_ids, b_ids, embeddings) < FOCUS_THRESHOLD:
            return FOCUS_PENALTY
    return 0.0
