"""Non-redundancy: the release's pairwise string rules, thresholds and -0.1 per flag.

Every pair of sentences of a text is compared (case-sensitive). An identical pair, or one
sentence contained in the other, counts 4 flags. Otherwise, and only when the longer
sentence has at least 5 words, one flag is raised for each of: the longest common
substring (``difflib``, as released, its default junk heuristic included) is longer than
0.8 x the shorter sentence in characters; the longest common run of words is longer than
0.8 x the shorter word count; the character edit distance is below 0.6 x the longer length;
more than 0.8 x the shorter word count of ``a``'s words (repeats counted) occur in ``b``.

>>> redundancy_flags("He went home.", "He went home.")
4
>>> redundancy_flags("The cat sat on the mat today.", "The cat sat on the mat today!")
4
>>> redundancy_score(["The cat sat on the mat today.", "It was a warm and sunny afternoon."])
0.0
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections import Counter
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

PENALTY_PER_FLAG = -0.1
CONTAINED_FLAGS = 4
MIN_WORDS = 5
SHARED_FRACTION = 0.8
EDIT_FRACTION = 0.6


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (unit costs) between the characters of ``a`` and ``b``, by ``rapidfuzz``
    (compiled; the tests compare it with a pure-Python one).

    >>> edit_distance("kitten", "sitting")
    3
    """
    return Levenshtein.distance(a, b)


def edit_distance_below(a: str, b: str, limit: float) -> bool:
    """Whether :func:`edit_distance` of ``a`` and ``b`` is below ``limit``: the same answer, but the
    distance is computed only when the difference in length, a lower bound (each edit changes the
    length by at most one), leaves it open.

    >>> edit_distance_below("kitten", "sitting", 4), edit_distance_below("kitten", "sitting", 3)
    (True, False)
    """
    if abs(len(a) - len(b)) >= limit:
        return False
    return edit_distance(a, b) < limit


def longest_common_run(a: Sequence, b: Sequence) -> int:
    """Length of the longest common contiguous run (``difflib``, default settings, as released)."""
    return difflib.SequenceMatcher(None, a, b).find_longest_match(0, len(a), 0, len(b)).size


def _holds_run(sequence: str | Sequence[str], run: str | Sequence[str]) -> bool:
    """Whether ``run`` occurs contiguously in ``sequence``: characters of a string, or words (no
    whitespace inside a word, as ``str.split`` gives them)."""
    if isinstance(sequence, str):
        return run in sequence
    return f" {' '.join(run)} " in f" {' '.join(sequence)} "


def shares_long_run(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """Whether :func:`longest_common_run` of ``a`` and ``b`` is longer than ``SHARED_FRACTION`` x the
    shorter length: the same answer, but ``difflib`` runs only when a substring search leaves it open.

    A common run of ``need`` items lies within the shorter sequence, and every run of ``need`` items
    of a sequence of length ``m`` holds its middle ``[m - need, need)`` (``need`` > m / 2). When the
    other sequence lacks that middle, no common run is that long, ``difflib``'s (never longer than
    the true longest) included.

    >>> shares_long_run("The cat sat on the mat.", "The cat sat on the mat!"), shares_long_run("abcdef", "xyz")
    (True, False)
    """
    shorter = min(len(a), len(b))
    need = math.floor(SHARED_FRACTION * shorter) + 1  # the shortest length above the fraction
    if need > shorter:
        return False
    short, other = (a, b) if len(a) <= len(b) else (b, a)
    if not _holds_run(other, short[shorter - need : need]):
        return False
    return longest_common_run(a, b) > SHARED_FRACTION * shorter


def redundancy_flags(a: str, b: str) -> int:
    """How many of the release's redundancy rules the sentence pair ``(a, b)`` triggers (0 to 4)."""
    return _pair_flags(_Sentence.of(a), _Sentence.of(b))


@dataclasses.dataclass(frozen=True)
class _Sentence:
    """What the rules read of a sentence, made once per sentence rather than once per pair: the
    stripped text, its words, and how often each word occurs."""

    text: str
    words: list[str]
    counts: Counter

    @classmethod
    def of(cls, sentence: str) -> _Sentence:
        text = sentence.strip()
        words = text.split()
        return cls(text, words, Counter(words))


def _pair_flags(a: _Sentence, b: _Sentence) -> int:
    if a.text in b.text or b.text in a.text:
        return CONTAINED_FLAGS
    if max(len(a.words), len(b.words)) < MIN_WORDS:
        return 0
    shorter_words = min(len(a.words), len(b.words))
    shared = sum(count for word, count in a.counts.items() if word in b.counts)  # a's words, repeats counted
    return (
        int(shares_long_run(a.text, b.text))
        + int(shares_long_run(a.words, b.words))
        + int(edit_distance_below(a.text, b.text, EDIT_FRACTION * max(len(a.text), len(b.text))))
        + int(shared > SHARED_FRACTION * shorter_words)
    )


def redundancy_score(sentences: Sequence[str]) -> float:
    """``-0.1`` per flag, summed over every pair of the text's sentences (0 = no redundancy)."""
    read = [_Sentence.of(sentence) for sentence in sentences]
    flags = sum(_pair_flags(read[i], read[j]) for i in range(len(read)) for j in range(i + 1, len(read)))
    return PENALTY_PER_FLAG * flags + 0.0  # + 0.0 turns -0.0 into 0.0
