"""The percentile table against plain sorting and counting, its buckets, its file and its refusals."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from story_quality.fluency.percentiles import MIN_POINTS, PercentileTable

BOUNDS = (3, 6, None)


def slow_percentile(human: list[tuple[float, int]], score: float, length: int) -> float:
    """Share of the human scores of the same bucket below ``score``, ties counted half, by a loop."""

    def bucket(n: int) -> int:
        return 0 if n <= 3 else 1 if n <= 6 else 2

    same = [s for s, n in human if bucket(n) == bucket(length)]
    below = sum(1 for s in same if s < score)
    equal = sum(1 for s in same if s == score)
    return 100.0 * (below + equal / 2) / len(same)


def toy_human(seed: int = 0, per_bucket: int = 40) -> list[tuple[float, int]]:
    rng = random.Random(seed)
    rows = []
    for lengths in ((1, 3), (4, 6), (7, 30)):
        for _ in range(per_bucket):
            rows.append((round(rng.uniform(-3, 3), 1), rng.randint(*lengths)))  # ties on purpose
    return rows


def test_percentiles_match_plain_counting():
    human = toy_human()
    table = PercentileTable.build([s for s, _ in human], [n for _, n in human], bounds=BOUNDS)
    queries = [(s, n) for s in (-4.0, -1.2, 0.0, 0.3, 1.0, 2.9, 5.0) for n in (1, 3, 4, 6, 7, 50)]
    got = table.percentiles([s for s, _ in queries], [n for _, n in queries])
    expected = [slow_percentile(human, s, n) for s, n in queries]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_a_full_bucket_keeps_the_order_statistics_at_half_ranks():
    rng = random.Random(1)
    scores = [rng.gauss(0, 1) for _ in range(250)]
    table = PercentileTable.build(scores, [2] * 250, bounds=(None,), most_points=100)
    ordered = sorted(scores)
    expected = [round(ordered[math.floor((i + 0.5) * 250 / 100)], 4) for i in range(100)]
    assert list(table.points[0]) == expected


def test_a_score_does_not_depend_on_the_other_scores_of_the_call():
    human = toy_human(2)
    table = PercentileTable.build([s for s, _ in human], [n for _, n in human], bounds=BOUNDS)
    scores, lengths = [0.25, -1.0, 2.0, 0.25], [2, 5, 9, 9]
    together = table.percentiles(scores, lengths)
    alone = [table.percentiles([s], [n])[0] for s, n in zip(scores, lengths, strict=True)]
    assert together.tolist() == alone
    assert together[0] != together[3]  # the same score, another length's bucket


def test_written_and_read_back_it_is_the_same_table(tmp_path):
    human = toy_human(3)
    table = PercentileTable.build(
        [s for s, _ in human], [n for _, n in human], bounds=BOUNDS, described="toy"
    )
    table.write(tmp_path)
    assert PercentileTable.read(tmp_path) == table


def test_refusals_name_the_bucket_or_the_file(tmp_path):
    with pytest.raises(ValueError, match="at most 3 words needs 20"):
        PercentileTable.build([0.0] * (MIN_POINTS + 5), [5] * (MIN_POINTS + 5), bounds=BOUNDS)
    with pytest.raises(ValueError, match="holds no percentiles.json"):
        PercentileTable.read(tmp_path)
    (tmp_path / "percentiles.json").write_text('{"bounds": [null]}')
    with pytest.raises(ValueError, match="not a percentile table"):
        PercentileTable.read(tmp_path)
    table = PercentileTable.build([float(i) for i in range(30)], [1] * 30, bounds=(None,))
    with pytest.raises(ValueError, match="sentence 1: score nan"):
        table.percentiles([0.0, float("nan")], [1, 1])
