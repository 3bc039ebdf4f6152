"""The two robustness views of UNION's paper: biased test sets and error-type sets.

Both follow the construction described in the paper's text (UNION, Guan & Huang, EMNLP 2020,
ROCStories annotation set: 400 stories, seven annotators each).

Biased test sets (Figure 2: robustness to a drift in the quality distribution)
    A story's human score is ``k / 7``, where ``k`` (0..7) is the number of annotators who voted
    it "reasonable" (the sum of its seven 0/1 votes). There are eight sets, ``I = 1..8``. Set ``I``
    keeps every story independently with probability ``1 / (|I - k| + 1)``: a story whose ``k``
    equals ``I`` is always kept, one a vote away half of the time, two votes away a third of the
    time, and so on. Set 1 therefore leans to bad stories and set 8 to good ones, while every set
    still holds stories of every score. Set sizes vary from draw to draw; on the ROC annotations
    the expected size runs from about 200 stories (set 3) down to about 81 (set 8, where no story
    can be an exact match). The paper drew each set once; here each set is drawn
    ``repeats`` times (default 20) and the correlations are reported as mean and standard
    deviation over the draws. Each set has its own child seed of ``numpy.random.SeedSequence(seed)``,
    so the draws are reproducible and adding or removing a set changes no other set's draws. Every
    metric is evaluated on the very same draws, so the comparison between metrics is paired.

Error-type sets (Table 7: which errors a metric notices)
    ``ant_data_all.txt`` gives each annotator's error code for the story (0 reasonable,
    1 repeated plot, 2 poor coherence, 3 conflicting logic, 4 chaotic scene, 5 other). A story has
    error type ``e`` when at least three of its seven annotators gave code ``e``; a story can
    therefore have two error types (e.g. three votes for repetition and three for poor coherence)
    and then joins both sets. The set of error type ``e`` holds the *reasonable* stories, those
    that all seven annotators voted reasonable, plus every story of type ``e``. The paper reports
    the four types 1..4. On the released ROC annotations this gives 19 reasonable stories and
    24 (repeated plot), 38 (poor coherence), 61 (conflicting logic) and 23 (chaotic scene) stories
    with the error; no story has three or more "other" votes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from story_quality.evaluation.annotations import ERROR_TYPES, AnnotatedStories

BIASED_SET_LEVELS: tuple[int, ...] = tuple(range(1, 9))
BIASED_SET_REPEATS = 20
ERROR_TYPE_MIN_ANNOTATORS = 3
ERROR_TYPE_SET_CODES: tuple[int, ...] = (1, 2, 3, 4)


def reasonable_vote_counts(votes: np.ndarray) -> np.ndarray:
    """``k`` per story: how many annotators voted it reasonable (the row sums of the 0/1 votes)."""
    votes = np.asarray(votes)
    if votes.ndim != 2:
        raise ValueError(f"votes must be a stories x annotators matrix, got shape {votes.shape}")
    return votes.sum(axis=1).astype(np.int64)


def inclusion_probability(level: int, counts: np.ndarray) -> np.ndarray:
    """Probability that biased set ``level`` keeps a story with ``counts`` reasonable votes."""
    counts = np.asarray(counts)
    return 1.0 / (np.abs(level - counts) + 1.0)


def sample_biased_set(counts: np.ndarray, level: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted indices of one draw of biased set ``level``: each story kept independently."""
    counts = np.asarray(counts)
    if counts.ndim != 1:
        raise ValueError(f"counts must be one vote count per story, got shape {counts.shape}")
    if counts.size and (not np.issubdtype(counts.dtype, np.integer) or counts.min() < 0):
        raise ValueError("counts must be non-negative integers (reasonable votes per story)")
    keep = rng.random(len(counts)) < inclusion_probability(level, counts)
    return np.flatnonzero(keep)


@dataclass(frozen=True)
class BiasedSet:
    """``repeats`` independent draws (sorted story indices) of biased set ``level`` (``I``)."""

    level: int
    draws: tuple[np.ndarray, ...]


def biased_sets(
    counts: np.ndarray,
    levels: Sequence[int] = BIASED_SET_LEVELS,
    repeats: int = BIASED_SET_REPEATS,
    seed: int = 0,
) -> list[BiasedSet]:
    """All biased sets for the per-story reasonable-vote ``counts``; one child seed per set."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if len(set(levels)) != len(levels):
        raise ValueError(f"biased set levels must be distinct, got {list(levels)}")
    generators = [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(len(levels))]
    return [
        BiasedSet(level=level, draws=tuple(sample_biased_set(counts, level, rng) for _ in range(repeats)))
        for level, rng in zip(levels, generators, strict=True)
    ]


def fully_reasonable(votes: np.ndarray) -> np.ndarray:
    """True where every annotator voted the story reasonable (the error-type sets' good stories)."""
    votes = np.asarray(votes)
    return np.all(votes == 1, axis=1)


def story_error_types(
    error_codes: np.ndarray, min_annotators: int = ERROR_TYPE_MIN_ANNOTATORS
) -> list[frozenset[int]]:
    """Per story: every non-zero code that at least ``min_annotators`` annotators gave it."""
    if min_annotators < 1:
        raise ValueError(f"min_annotators must be at least 1, got {min_annotators}")
    codes = np.asarray(error_codes)
    result = []
    for row in codes:
        values, counts = np.unique(row[row != 0], return_counts=True)
        result.append(frozenset(int(v) for v, c in zip(values, counts, strict=True) if c >= min_annotators))
    return result


@dataclass(frozen=True)
class ErrorTypeSet:
    """Story indices of one error type's set: the reasonable stories plus those with the error."""

    code: int
    name: str
    indices: np.ndarray
    n_reasonable: int
    n_with_error: int


def error_type_sets(
    annotations: AnnotatedStories,
    codes: Sequence[int] = ERROR_TYPE_SET_CODES,
    min_annotators: int = ERROR_TYPE_MIN_ANNOTATORS,
) -> list[ErrorTypeSet]:
    """One set per error code in ``codes``: all fully reasonable stories plus that type's stories."""
    if annotations.error_codes is None:
        raise ValueError("error-type sets need the error-code file (ant_data_all.txt)")
    unknown = [code for code in codes if code not in ERROR_TYPES or code == 0]
    if unknown:
        raise ValueError(f"unknown error codes {unknown}; the error types are 1..{max(ERROR_TYPES)}")
    reasonable = fully_reasonable(annotations.votes)
    types = story_error_types(annotations.error_codes, min_annotators)
    sets = []
    for code in codes:
        with_error = np.array([code in kinds for kinds in types], dtype=bool)
        sets.append(
            ErrorTypeSet(
                code=code,
                name=ERROR_TYPES[code],
                indices=np.flatnonzero(reasonable | with_error),
                n_reasonable=int(reasonable.sum()),
                n_with_error=int(with_error.sum()),
            )
        )
    return sets
