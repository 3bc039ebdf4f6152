"""The per-corruption accuracy table of benchmarks/union_heldout_by_corruption.py."""

from __future__ import annotations

import pytest

from benchmarks.union_heldout_by_corruption import HUMAN, SEVERAL, accuracy_by_kind, corruption_kind


@pytest.mark.parametrize(
    ("label", "corruptions", "kind"),
    [
        (1, [], HUMAN),
        (0, ["reordering"], "reordering"),
        (0, ["substitution:word"], "substitution:word"),
        (0, ["negation", "reordering"], SEVERAL),
        # one technique in two variants counts as that technique
        (0, ["substitution:word", "substitution:sentence"], "substitution"),
    ],
)
def test_kind(label, corruptions, kind):
    assert corruption_kind(label, corruptions) == kind


def test_accuracy_by_kind_counts_the_right_side_of_one_half():
    scores = [0.9, 0.4, 0.2, 0.7, 0.6, 0.1]
    labels = [1, 1, 0, 0, 0, 0]
    corruptions = [[], [], ["negation"], ["negation"], ["reordering"], ["negation", "repetition:ngram"]]
    rows = accuracy_by_kind(scores, labels, corruptions)
    assert [row[:2] for row in rows] == [(HUMAN, 2), ("negation", 2), ("reordering", 1), (SEVERAL, 1)]
    by_kind = {kind: (mean, acc) for kind, _, mean, acc in rows}
    assert by_kind[HUMAN] == pytest.approx((0.65, 0.5))
    assert by_kind["negation"] == pytest.approx((0.45, 0.5))
    assert by_kind["reordering"] == pytest.approx((0.6, 0.0))
    assert by_kind[SEVERAL] == pytest.approx((0.1, 1.0))


def test_lengths_must_agree():
    with pytest.raises(ValueError):
        accuracy_by_kind([0.5], [1, 0], [[], ["negation"]])
