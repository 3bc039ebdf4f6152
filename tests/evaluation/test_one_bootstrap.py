"""One bootstrap for the whole package: the evaluator's interval is compare's, on any scores, at any level it takes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from story_quality.evaluation import comparison, significance
from story_quality.evaluation.evaluator import GeneratedTextEvaluator, bootstrap_means

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
SCORES = [float(x) for x in np.random.default_rng(7).beta(4, 3, 40)]


class ScoresMetric:
    """A metric whose compute returns fixed per-text scores and their mean, as union's does."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def compute(self, predictions: list[str]) -> dict:
        return {"scores": self.scores, "union_score": sum(self.scores) / len(self.scores), "signature": "s"}


def test_the_evaluator_and_compare_give_the_same_interval_on_the_same_scores(tmp_path):
    rows = [
        {"index": i, "union": score} | ({"signature": SIGNATURE} if i == 0 else {})
        for i, score in enumerate(SCORES)
    ]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    compared = comparison.compare_files([path], resamples=1000, seed=0, paired=False).systems[0].interval
    evaluated = bootstrap_means(
        {"scores": SCORES, "union_score": 0.0}, 0.95, n_resamples=1000, random_state=0
    )
    assert evaluated["union_score"]["confidence_interval"] == (compared.low, compared.high)
    # and it is the percentile bootstrap written out: order statistics 25 and 974 of 1,000 resampled means
    rng = np.random.default_rng(0)
    means = np.sort(np.asarray(SCORES)[rng.integers(0, 40, size=(1000, 40))].mean(axis=1))
    assert (compared.low, compared.high) == (means[25], means[974])
    assert evaluated["union_score"]["standard_error"] == pytest.approx(means.std(ddof=1), rel=1e-12)


def test_equal_scores_give_the_interval_of_their_value_not_nan():
    result = bootstrap_means({"scores": [0.25] * 12, "union_score": 0.25}, random_state=3)["union_score"]
    assert result == {"score": 0.25, "confidence_interval": (0.25, 0.25), "standard_error": 0.0}


@pytest.mark.parametrize("level", [95, 0, 1, -0.5])
def test_a_confidence_level_that_is_not_a_fraction_is_refused_by_name(level):
    expected = (
        "confidence_level must be a fraction between 0 and 1, as evaluate takes it (0.95 for a 95 % interval), "
        f"got {level!r}"
    )
    with pytest.raises(ValueError) as refused:
        GeneratedTextEvaluator().compute_metric(
            ScoresMetric(SCORES), {"predictions": ["a"] * 40}, strategy="bootstrap", confidence_level=level
        )
    assert str(refused.value) == expected


def test_random_state_is_a_seed_a_generator_or_none():
    result = {"scores": SCORES, "union_score": 0.5}
    fresh = bootstrap_means(result, n_resamples=200)["union_score"]["confidence_interval"]
    assert all(math.isfinite(end) for end in fresh)
    drawn = bootstrap_means(result, n_resamples=200, random_state=np.random.default_rng(1))
    seeded = int(np.random.default_rng(1).integers(0, 2**63))
    interval = significance.bootstrap_interval(SCORES, 200, seeded)
    assert drawn["union_score"]["confidence_interval"] == (interval.low, interval.high)
    with pytest.raises(
        TypeError, match="random_state must be a non-negative integer seed, a numpy Generator or None"
    ):
        bootstrap_means(result, random_state="0")
