"""The meta-evaluation as a whole: each metric's, baseline's and the raters' figures are the figures
of the rated and scored items, the pairs' tests are Williams' and the permutation test, and the
report's JSON holds every figure (null where the data cannot give it)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from story_quality import score_file
from story_quality.cli.meta_report import evaluation_table
from story_quality.evaluation import correlation, meta_figures
from story_quality.evaluation.meta_evaluation import meta_evaluate, meta_evaluate_files
from story_quality.evaluation.meta_reading import MetricScores, read_all_scores, read_ratings
from story_quality.evaluation.meta_results import PairFigure
from story_quality.evaluation.meta_statistics import Design, permutation_test

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
WORDS = "the cat dog ran sat on a hill and went home quickly".split()


def story_set(tmp_path, seed=0, systems=3, groups=8, raters=3):
    """A ratings file (per-rater lists, some missing) and three metrics' score files written as
    story-quality score writes them."""
    rng = np.random.default_rng(seed)
    rows, quality = [], []
    for g in range(groups):
        for s in range(systems):
            q = 0.5 * s + rng.normal()
            ratings = [float(np.clip(np.round(q + 3 + rng.normal(0, 0.7)), 1, 5)) for _ in range(raters)]
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(4, 25))))
            rows.append({"text": text, "human": ratings, "system": f"sys{s}", "group": f"prompt{g}"})
            quality.append(q)
    rows[4]["human"] = [None] * raters  # one story nobody rated
    rows[7]["human"][1] = None  # one rating missing
    (tmp_path / "ratings.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    paths = []
    for name, noise in (("good", 0.5), ("fair", 1.0), ("poor", 3.0)):
        scores = 1 / (1 + np.exp(-(np.array(quality) + rng.normal(0, noise, len(rows)))))
        lines = []
        for i, row in enumerate(rows):
            record = {"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(row["text"])}
            if i == 0:
                record.update(signature=SIGNATURE, input_rows=len(rows))
            record.update(
                {"skipped": "empty"} if (name == "fair" and i == 9) else {"union": float(scores[i])}
            )
            lines.append(score_file.seal(record))
        (tmp_path / f"{name}.jsonl").write_text("".join(lines))
        paths.append(tmp_path / f"{name}.jsonl")
    return tmp_path / "ratings.jsonl", paths


def test_every_figure_is_the_figure_of_the_rated_and_scored_items(tmp_path):
    ratings_path, paths = story_set(tmp_path)
    result = meta_evaluate_files(ratings_path, paths, resamples=40, seed=1)
    ratings = read_ratings(ratings_path)
    keep = np.ones(24, bool)
    keep[[4, 9]] = False  # not rated; skipped by one metric's file
    assert (result.rows, result.missing, result.unscored, result.n) == (24, 1, 1, 22)
    assert (result.systems, result.groups, result.raters) == (3, 8, 3)
    human = np.array([np.mean([x for x in row if x is not None]) for row in
                      [json.loads(line)["human"] for line in ratings_path.read_text().splitlines()]
                      if any(x is not None for x in row)] , dtype=float)  # fmt: skip
    np.testing.assert_allclose(np.delete(human, 8), ratings.human[keep])
    systems = np.array([int(s[-1]) for s in np.array(ratings.systems)[keep]])
    groups = np.array([int(g[-1]) for g in np.array(ratings.groups)[keep]])
    good = np.array([json.loads(line).get("union", math.nan) for line in paths[0].read_text().splitlines()])[
        keep
    ]
    assert result.metrics[0].figures["pooled.pearson"].estimate == pytest.approx(
        stats.pearsonr(good, ratings.human[keep]).statistic, abs=1e-12
    )
    expected = meta_figures.compute(good, ratings.human[keep], systems, groups, result.figures)
    found = [result.metrics[0].figures[name].estimate for name in result.figures]
    np.testing.assert_allclose(found, expected, atol=1e-12)
    lengths = [len(ratings.texts[i].split()) for i in np.flatnonzero(keep)]
    assert result.baselines[0].figures["pooled.spearman"].estimate == pytest.approx(
        stats.spearmanr(lengths, ratings.human[keep]).statistic, abs=1e-12
    )
    assert [b.name for b in result.baselines] == ["length (words)", "distinct 3-grams", "system-mean oracle",
                                                  "group-mean oracle"]  # fmt: skip
    for metric in [*result.metrics, *result.baselines, result.ceiling]:
        for estimate in metric.figures.values():
            if not math.isnan(estimate.low):
                assert estimate.low <= estimate.high


def test_the_pairs_carry_williams_test_and_the_permutation_test(tmp_path):
    ratings_path, paths = story_set(tmp_path, seed=2)
    result = meta_evaluate_files(ratings_path, paths[:2], resamples=40, seed=3)
    (pair,) = result.pairs
    ratings = read_ratings(ratings_path)
    keep = np.isfinite(ratings.human)
    keep[9] = False
    scores = [np.array([json.loads(line).get("union", math.nan) for line in p.read_text().splitlines()])[keep]
              for p in paths[:2]]  # fmt: skip
    human = ratings.human[keep]
    williams = correlation.williams_test(
        stats.pearsonr(scores[0], human).statistic, stats.pearsonr(scores[1], human).statistic,
        stats.pearsonr(scores[0], scores[1]).statistic, int(keep.sum()), "two-sided",
    )  # fmt: skip
    assert pair.result["pooled.pearson"].p_williams == pytest.approx(williams.p_value, rel=1e-9)
    design = Design(human, np.unique(np.array(ratings.systems)[keep], return_inverse=True)[1],
                    np.unique(np.array(ratings.groups)[keep], return_inverse=True)[1])  # fmt: skip
    p_values = permutation_test(scores[0], scores[1], design, result.figures, 40, 3)
    np.testing.assert_array_equal([pair.result[name].p_permutation for name in result.figures], p_values)
    difference = pair.result["pooled.kendall"].difference.estimate
    assert difference == pytest.approx(
        result.metrics[0].figures["pooled.kendall"].estimate
        - result.metrics[1].figures["pooled.kendall"].estimate
    )
    assert not result.metrics[0].rank  # groups only with more than two metrics


def test_more_than_two_metrics_are_grouped_and_the_json_holds_every_figure(tmp_path):
    ratings_path, paths = story_set(tmp_path, seed=4, groups=15)
    result = meta_evaluate_files(ratings_path, paths, resamples=40, seed=0)
    assert all(set(metric.rank) == set(result.figures) for metric in result.metrics)
    assert result.metrics[2].rank["pooled.pearson"] > result.metrics[0].rank["pooled.pearson"]  # poor vs good
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert [m["signature"] for m in data["metrics"]] == [SIGNATURE] * 3
    assert data["n"] == result.n and len(data["pairs"]) == 3 and data["ceiling"]["kind"] == "ceiling"
    assert set(data["metrics"][0]["figures"]) == set(result.figures)
    table = evaluation_table(result)
    assert "raters (leave one out)" in table and "group-mean oracle" in table and "Williams p" in table
    assert "between metrics:" in table and not any(line != line.rstrip() for line in table.splitlines())


def test_data_without_systems_or_groups_gives_the_pooled_figures_only(tmp_path):
    rng = np.random.default_rng(5)
    human = rng.normal(size=30)
    ratings_path = tmp_path / "r.jsonl"
    ratings_path.write_text(
        "".join(json.dumps({"text": f"story {i}", "human": h}) + "\n" for i, h in enumerate(human))
    )
    ratings = read_ratings(ratings_path)
    metric = MetricScores("m", "m.jsonl", None, "score", human + rng.normal(size=30), "id")
    result = meta_evaluate(ratings, [metric], resamples=40)
    assert result.figures == meta_figures.available_figures(False, False)
    assert result.ceiling is None and [b.name for b in result.baselines] == [
        "length (words)",
        "distinct 3-grams",
    ]
    assert json.loads(json.dumps(result.to_dict(), allow_nan=False))["baselines"][1]["figures"]["pooled.pearson"][
        "estimate"] is None  # every story has the same distinct 3-gram ratio: undefined  # fmt: skip


@pytest.mark.parametrize("scale", [1e155, 1e-200, 1e9, 1e-9])
def test_scores_scaled_by_any_factor_give_the_same_figures_intervals_and_tests(tmp_path, scale):
    ratings_path, paths = story_set(tmp_path, seed=6)
    ratings = read_ratings(ratings_path)
    metrics = read_all_scores(paths[:2], ratings, "id", None)
    expected = meta_evaluate(ratings, metrics, resamples=40)
    metrics[0].scores = metrics[0].scores * scale
    found = meta_evaluate(ratings, metrics, resamples=40)
    pairs = (found.pairs[0].result, expected.pairs[0].result)
    for mine, theirs in ((found.metrics[0].figures, expected.metrics[0].figures), pairs):
        for name in expected.figures:
            one, other = mine[name], theirs[name]
            if isinstance(one, PairFigure):
                assert one.p_permutation == pytest.approx(other.p_permutation, nan_ok=True)
                one, other = one.difference, other.difference
            assert [one.estimate, one.low, one.high] == pytest.approx(
                [other.estimate, other.low, other.high], abs=1e-9, nan_ok=True
            ), name
    assert expected.metrics[0].figures["residual.pearson"].estimate == pytest.approx(
        found.metrics[0].figures["residual.pearson"].estimate, abs=1e-9
    )


def test_ratings_that_are_all_equal_are_refused(tmp_path):
    """No figure says anything of ratings that never differ (a tie-calibrated accuracy of 1.000 would)."""
    ratings_path = tmp_path / "r.jsonl"
    ratings_path.write_text("".join(json.dumps({"text": f"story {i}", "human": 3}) + "\n" for i in range(10)))
    ratings = read_ratings(ratings_path)
    metric = MetricScores("m", "m.jsonl", None, "score", np.linspace(0, 1, 10), "id")
    with pytest.raises(
        score_file.ScoreFileError, match=r"r.jsonl: every rating is 3 on the 10 rated and scored rows"
    ):
        meta_evaluate(ratings, [metric], resamples=40)


@pytest.mark.parametrize("column", ["system", "group"])
def test_one_story_a_system_or_group_is_said_the_oracle_being_the_ratings(tmp_path, column):
    ratings_path = tmp_path / "r.jsonl"
    rows = [{"text": f"story {i}", "human": i % 5, column: f"c{i}"} for i in range(12)]
    ratings_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    ratings = read_ratings(ratings_path)
    metric = MetricScores("m", "m.jsonl", None, "score", np.linspace(0, 1, 12), "id")
    result = meta_evaluate(ratings, [metric], resamples=40)
    assert result.baselines[-1].figures["pooled.pearson"].estimate == pytest.approx(1.0)
    assert any(
        note.startswith(f"every {column} holds one story: the {column}-mean oracle") for note in result.notes
    )
    two = [{**row, column: f"c{i // 2}"} for i, row in enumerate(rows)]
    ratings_path.write_text("".join(json.dumps(row) + "\n" for row in two))
    assert not any(
        "holds one story" in n for n in meta_evaluate(read_ratings(ratings_path), [metric], 40).notes
    )


def test_too_few_items_and_bad_settings_are_refused(tmp_path):
    ratings_path, paths = story_set(tmp_path, groups=3)
    with pytest.raises(ValueError, match="--resamples must be from 40"):
        meta_evaluate_files(ratings_path, paths, resamples=10)
    with pytest.raises(ValueError, match="--confidence"):
        meta_evaluate_files(ratings_path, paths, confidence=95)
    ratings = read_ratings(ratings_path)
    metric = MetricScores("m", "m.jsonl", None, "score", np.r_[0.1, [math.nan] * 8], "id")
    with pytest.raises(
        score_file.ScoreFileError, match="1 rows have a rating and every metric's score; at least 3"
    ):
        meta_evaluate(ratings, [metric], resamples=40)
