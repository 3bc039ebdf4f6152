"""The two robustness views of UNION's paper, reconstructed: biased test sets and error-type sets.

The paper's text was not available to this project, so both constructions below are our
reconstruction from its figure/table descriptions; they are documented exactly so that a reader can
judge (and change) them.

Biased test sets (UNION, Figure 2: robustness to a shift in the quality distribution)
    A story is *reasonable* when a strict majority of its annotators voted 1 (4 or more of 7).
    Test set ``k`` (k = 1..8) holds a fraction ``p_k = k / 10`` of reasonable stories
    (10 %, 20 %, ..., 80 %: eight sets bracketing the 44 % of the full ROC annotation set). Each set
    has ``size`` stories (default 200, half of the 400; the largest round size that both 80 %
    reasonable and 90 % unreasonable allow from 176 reasonable / 224 unreasonable stories):
    ``round(p_k * size)`` reasonable stories drawn uniformly without replacement from the
    reasonable ones, the rest likewise from the unreasonable ones, so every story of a group is
    equally likely to be chosen (inclusion probability ``count / group size``). Because one draw of
    200 out of 400 is noisy, each set is drawn ``repeats`` times (default 20) from a seeded
    generator and correlations are averaged; the standard deviation is reported alongside.
    Every metric is evaluated on the very same draws, so the comparison between metrics is paired.

Error-type sets (UNION, Table 7: which errors a metric notices)
    ``ant_data_all.txt`` gives each annotator's reason for a 0 vote. A story's error type is the
    most frequent non-zero code among its annotators (all tied codes when several share the top
    count). The set for error type ``e`` holds every reasonable story (majority vote, as above)
    plus every unreasonable story whose error type includes ``e``, so the correlation there
    measures how well a metric separates stories with that error from good ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from training.annotations import ERROR_TYPES, AnnotatedStories

BIASED_REASONABLE_FRACTIONS: tuple[float, ...] = tuple(k / 10 for k in range(1, 9))
BIASED_SET_SIZE = 200
BIASED_SET_REPEATS = 20


@dataclass(frozen=True)
class BiasedSet:
    """``repeats`` independent draws (story indices) of one biased test set."""

    reasonable_fraction: float
    size: int
    draws: tuple[np.ndarray, ...]


def sample_biased_set(
    is_reasonable: np.ndarray, reasonable_fraction: float, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Sorted indices of ``size`` stories, ``round(reasonable_fraction * size)`` of them reasonable."""
    is_reasonable = np.asarray(is_reasonable, dtype=bool)
    if not 0.0 <= reasonable_fraction <= 1.0:
        raise ValueError(f"reasonable_fraction must be in [0, 1], got {reasonable_fraction}")
    n_reasonable = int(round(reasonable_fraction * size))
    n_unreasonable = size - n_reasonable
    reasonable = np.flatnonzero(is_reasonable)
    unreasonable = np.flatnonzero(~is_reasonable)
    if n_reasonable > len(reasonable) or n_unreasonable > len(unreasonable):
        raise ValueError(
            f"a biased set of {size} stories with {reasonable_fraction:.0%} reasonable needs {n_reasonable} "
            f"reasonable and {n_unreasonable} unreasonable stories, but there are only {len(reasonable)} "
            f"and {len(unreasonable)}: lower the set size"
        )
    chosen = np.concatenate(
        [
            rng.choice(reasonable, size=n_reasonable, replace=False),
            rng.choice(unreasonable, size=n_unreasonable, replace=False),
        ]
    )
    return np.sort(chosen)


def biased_sets(
    is_reasonable: np.ndarray,
    fractions: Sequence[float] = BIASED_REASONABLE_FRACTIONS,
    size: int = BIASED_SET_SIZE,
    repeats: int = BIASED_SET_REPEATS,
    seed: int = 0,
) -> list[BiasedSet]:
    """All biased sets; each fraction gets its own child seed, so adding a set changes no other."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    generators = [
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(len(fractions))
    ]
    return [
        BiasedSet(
            reasonable_fraction=fraction,
            size=size,
            draws=tuple(sample_biased_set(is_reasonable, fraction, size, rng) for _ in range(repeats)),
        )
        for fraction, rng in zip(fractions, generators, strict=True)
    ]


def story_error_types(error_codes: np.ndarray) -> list[frozenset[int]]:
    """Per story: the most frequent non-zero error code(s); empty when nobody reported an error."""
    result = []
    for row in np.asarray(error_codes):
        counts = Counter(int(code) for code in row if code != 0)
        top = max(counts.values(), default=0)
        result.append(frozenset(code for code, count in counts.items() if count == top))
    return result


@dataclass(frozen=True)
class ErrorTypeSet:
    """Story indices of one error type's set and how many of them carry the error."""

    code: int
    name: str
    indices: np.ndarray
    n_with_error: int


def error_type_sets(annotations: AnnotatedStories) -> list[ErrorTypeSet]:
    """One set per error type 1..5: all reasonable stories plus the unreasonable ones of that type."""
    if annotations.error_codes is None:
        raise ValueError("error-type sets need the error-code file (ant_data_all.txt)")
    reasonable = annotations.is_reasonable
    types = story_error_types(annotations.error_codes)
    sets = []
    for code, name in ERROR_TYPES.items():
        if code == 0:
            continue
        with_error = np.array(
            [not ok and code in kinds for ok, kinds in zip(reasonable, types, strict=True)], dtype=bool
        )
        sets.append(ErrorTypeSet(code, name, np.flatnonzero(reasonable | with_error), int(with_error.sum())))
    return sets
