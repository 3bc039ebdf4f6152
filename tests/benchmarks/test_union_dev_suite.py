"""The development suite scores through the union scorer: its figures are those of the scorer's scores."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from tiny_models import SAMPLE_STORIES, save_union_checkpoint

from benchmarks import dev_sets, union_dev_suite
from story_quality import precision
from story_quality.evaluation.correlation import METHODS, correlate
from story_quality.union import UnionScorer
from story_quality.union.normalization import ROC_STORIES

STORIES = SAMPLE_STORIES[:5]


def test_a_checkpoint_folder_is_scored_on_rated_and_paired_sets(tmp_path, monkeypatch):
    checkpoint = save_union_checkpoint(
        tmp_path / "tiny-union", normalization=ROC_STORIES.to_dict(), max_length=48
    )
    human = np.array([4.0, 1.0, 3.5, 2.0, 1.5])
    rated = [dev_sets.RatedSet("rated", STORIES, human)]
    pairs = [dev_sets.PairSet("pairs", STORIES[:3], STORIES[2:])]
    monkeypatch.chdir(tmp_path)  # a relative folder is made absolute
    rows = union_dev_suite.evaluate_checkpoint("tiny-union", rated, pairs, batch_size=2, max_length=32)
    scorer = UnionScorer(str(checkpoint))

    def scores_of(texts: list[str]) -> np.ndarray:  # one call per set, as the suite scores them
        return np.array(scorer.score(texts, batch_size=2, max_length=32).scores)

    scores = scores_of(STORIES)
    measured = correlate(scores, human)
    assert rows["rated"] == pytest.approx({m: measured.coefficient(m) for m in METHODS}, abs=1e-9)
    first, second = scores_of(STORIES[:3]), scores_of(STORIES[2:])
    assert rows["pairs"] == pytest.approx(
        {
            "pairs": 3,
            "pair accuracy": float((first > second).mean()),
            "accuracy at 0.5": float(((first > 0.5).sum() + (second <= 0.5).sum()) / 6),
            "human mean": float(first.mean()),
        },
        abs=1e-9,
    )


def test_the_suite_scores_in_the_precision_it_is_given(tmp_path, monkeypatch):
    checkpoint = save_union_checkpoint(tmp_path / "tiny", normalization=ROC_STORIES.to_dict(), max_length=48)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)  # emulated where the CPU lacks it
    for chosen in ("fp32", "bf16"):
        read = union_dev_suite.member_scorer(str(checkpoint), 2, None, None, chosen)
        direct = UnionScorer(str(checkpoint)).score(STORIES, batch_size=2, precision=chosen).scores
        assert read("set", STORIES).tolist() == direct
    assert read("set", STORIES).tolist() != UnionScorer(str(checkpoint)).score(STORIES, batch_size=2).scores


def test_several_checkpoints_are_scored_by_the_mean_of_their_scores(tmp_path):
    first = save_union_checkpoint(tmp_path / "a", normalization=ROC_STORIES.to_dict(), max_length=48, seed=1)
    second = save_union_checkpoint(tmp_path / "b", normalization=ROC_STORIES.to_dict(), max_length=48, seed=2)
    human = np.array([4.0, 1.0, 3.5, 2.0, 1.5])
    rated = [dev_sets.RatedSet("rated", STORIES, human)]
    rows = union_dev_suite.evaluate_checkpoint([str(first), str(second)], rated, [], 2, None)
    each = [np.array(UnionScorer(str(c)).score(STORIES, batch_size=2).scores) for c in (first, second)]
    assert not np.allclose(each[0], each[1])  # two different models, so the mean is not either one
    measured = correlate((each[0] + each[1]) / 2, human)
    assert rows["rated"] == pytest.approx({m: measured.coefficient(m) for m in METHODS}, abs=1e-9)


def test_kept_scores_stand_in_for_their_checkpoint_and_only_for_the_texts_they_scored(tmp_path):
    first = save_union_checkpoint(tmp_path / "a", normalization=ROC_STORIES.to_dict(), max_length=48, seed=1)
    second = save_union_checkpoint(tmp_path / "b", normalization=ROC_STORIES.to_dict(), max_length=48, seed=2)
    human = np.array([4.0, 1.0, 3.5, 2.0, 1.5])
    rated = [dev_sets.RatedSet("rated", STORIES, human)]
    pairs = [dev_sets.PairSet("pairs", STORIES[:3], STORIES[2:])]
    kept: dict[str, dict] = {}
    direct = union_dev_suite.evaluate_checkpoint(str(first), rated, pairs, 2, None, kept=kept)
    assert sorted(kept) == ["pairs: corrupted", "pairs: human", "rated"]
    assert kept["rated"]["scores"] == pytest.approx(
        UnionScorer(str(first)).score(STORIES, batch_size=2).scores, abs=1e-12
    )
    path = tmp_path / "a.json"
    path.write_text(json.dumps(kept))
    assert union_dev_suite.evaluate_checkpoint(str(path), rated, pairs, 2, None) == direct
    mixed = union_dev_suite.evaluate_checkpoint([str(path), str(second)], rated, pairs, 2, None)
    both = union_dev_suite.evaluate_checkpoint([str(first), str(second)], rated, pairs, 2, None)
    for name in both:
        assert mixed[name] == pytest.approx(both[name], abs=1e-12)
    other = [dev_sets.RatedSet("rated", [*STORIES[1:], STORIES[0]], human)]
    with pytest.raises(dev_sets.KeptScoresError, match=r"a\.json scored other texts for 'rated'"):
        union_dev_suite.evaluate_checkpoint(str(path), other, [], 2, None)
    with pytest.raises(dev_sets.KeptScoresError, match=r"a\.json keeps no scores for 'elsewhere'"):
        union_dev_suite.evaluate_checkpoint(
            str(path), [dev_sets.RatedSet("elsewhere", STORIES, human)], [], 2, None
        )


def test_bad_arguments_are_refused_by_name_before_any_set_is_read(tmp_path, monkeypatch, capsys):
    def unread() -> None:
        raise AssertionError("a set was read before the arguments were checked")

    monkeypatch.setattr(union_dev_suite, "rated_sets", unread)
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"rated": [0.5, 0.2]}))
    (tmp_path / "null.json").write_text(json.dumps({"rated": {"texts_sha256": "0", "scores": [0.5, None]}}))
    (tmp_path / "huge.json").write_text('{"rated": {"texts_sha256": "0", "scores": [1' + "0" * 400 + "]}}")
    for argv, message in (
        (["--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["--max-length", "8"], "--max-length must be at least 16, got 8"),
        (["--scores-dir", str(tmp_path / "a-file")], "--scores-dir .*a-file is a file, not a folder"),
        (["--scores-dir", str(tmp_path / "a-file" / "in")], "--scores-dir .*in: .*a-file is a file"),
        (["--checkpoint", str(tmp_path / "null.json")], "null.json: not a file of kept scores"),
        (["--report", str(tmp_path / "none" / "r.md")], "--report .*r.md: not a file in an existing folder"),
        (["--json", str(tmp_path)], "--json .*: not a file in an existing folder"),
        (["--checkpoint", str(tmp_path / "missing.json")], "missing.json: not a file of kept scores"),
        (["--checkpoint", str(tmp_path / "huge.json")], "huge.json: not a file of kept scores"),
        (["--mean-of", "default"], "--mean-of default: a mean needs at least two members"),
        (["--checkpoint", "default", "--mean-of", "default"], "--mean-of default: a mean needs at least two"),
        (["--checkpoint", "default", "--checkpoint", "default"], "default is named twice"),
        (["--mean-of", "default", "default"], "--mean-of default default: a member is named twice"),
        (
            ["--checkpoint", "a/b", "--checkpoint", "a-b", "--scores-dir", str(tmp_path / "kept")],
            "--scores-dir: rows a/b and a-b would keep their scores in one file, a-b.json",
        ),
        (["--mean-of", "default", str(tmp_path / "broken.json")], "broken.json: not a file of kept scores"),
        (
            ["--checkpoint", str(tmp_path / "other.json")],
            r"other.json: not a file of kept scores \(--scores-dir",
        ),
    ):
        with pytest.raises(SystemExit) as exit_info:
            union_dev_suite.main(argv)
        said = capsys.readouterr().err
        assert exit_info.value.code == 2 and re.search(message, said), (message, said)


def test_kept_scores_for_other_sets_are_refused_before_any_checkpoint_is_scored(
    tmp_path, monkeypatch, capsys
):
    human = np.array([4.0, 1.0, 3.5, 2.0, 1.5])
    rated = [dev_sets.RatedSet("rated", STORIES, human)]
    pairs = [dev_sets.PairSet("pairs", STORIES[:3], STORIES[2:])]
    texts = dev_sets.scored_texts(rated, pairs)
    assert texts == {"rated": STORIES, "pairs: human": STORIES[:3], "pairs: corrupted": STORIES[2:]}
    kept = {
        key: {"texts_sha256": dev_sets.texts_digest(t), "scores": [0.5] * len(t)} for key, t in texts.items()
    }
    monkeypatch.setattr(union_dev_suite, "rated_sets", lambda: rated)
    monkeypatch.setattr(union_dev_suite, "pair_sets", lambda: pairs)

    def unscored(spec: str) -> None:
        raise AssertionError(f"{spec} was loaded before the kept scores were checked")

    monkeypatch.setattr(union_dev_suite, "scorer_for", unscored)
    for name, broken, message in (
        (
            "no-pairs",
            {k: v for k, v in kept.items() if k != "pairs: corrupted"},
            "keeps no scores for 'pairs: corrupted'",
        ),
        ("short", {**kept, "rated": {**kept["rated"], "scores": [0.5]}}, "scored other texts for 'rated'"),
    ):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(broken))
        with pytest.raises(SystemExit) as exit_info:
            union_dev_suite.main(["--mean-of", "default", str(path)])
        assert exit_info.value.code == 2
        assert re.search(rf"{name}\.json {message}", capsys.readouterr().err)


def test_a_checkpoint_that_does_not_load_or_is_too_short_is_refused_before_any_text_is_scored(
    tmp_path, monkeypatch, capsys
):
    good = save_union_checkpoint(tmp_path / "good", normalization=ROC_STORIES.to_dict(), max_length=48)
    monkeypatch.setattr(union_dev_suite, "rated_sets", lambda: [dev_sets.RatedSet("r", STORIES, np.ones(5))])
    monkeypatch.setattr(union_dev_suite, "pair_sets", lambda: [])

    def unscored(*args, **kwargs) -> None:
        raise AssertionError("a row was scored before every member was loaded and checked")

    monkeypatch.setattr(union_dev_suite, "evaluate_checkpoint", unscored)
    for argv, message in (
        (["--checkpoint", str(good), "--checkpoint", str(tmp_path / "nope")], r"nope: "),
        (["--mean-of", str(good), str(tmp_path / "nope")], r"nope: "),
        (["--checkpoint", str(good), "--max-length", "1000"], r"good: max_length must be at most .* 48"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            union_dev_suite.main(argv)
        said = capsys.readouterr().err
        assert exit_info.value.code == 2 and re.search(message, said), (message, said)


def test_missing_data_is_a_usage_error_naming_the_setting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STORY_QUALITY_DATA", str(tmp_path / "no-data"))
    with pytest.raises(SystemExit) as exit_info:
        union_dev_suite.main(["--checkpoint", "default"])
    assert exit_info.value.code == 2
    assert "point STORY_QUALITY_DATA at the folder" in capsys.readouterr().err


def _pearson_by_hand(x: list[float], y: list[float]) -> float:
    """Pearson's r from its definition, the slow reference for the suite's figures."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return cov / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5


def test_a_set_of_several_systems_adds_the_mean_within_system_pearson(tmp_path):
    checkpoint = save_union_checkpoint(tmp_path / "tiny", normalization=ROC_STORIES.to_dict(), max_length=48)
    stories = STORIES + [s.upper() for s in STORIES[:4]]
    human = np.array([4.0, 1.0, 3.5, 2.0, 1.5, 3.0, 2.5, 1.0, 4.5])
    systems = ["a", "b", "a", "b", "a", "c", "c", "b", "c"]
    rated = [
        dev_sets.RatedSet("one system", stories, human),
        dev_sets.RatedSet("systems", stories, human, systems=systems),
    ]
    rows = union_dev_suite.evaluate_checkpoint(str(checkpoint), rated, [], 2, None)
    scores = UnionScorer(str(checkpoint)).score(stories, batch_size=2).scores
    within = [
        _pearson_by_hand(
            [s for s, t in zip(scores, systems, strict=True) if t == system],
            [h for h, t in zip(human, systems, strict=True) if t == system],
        )
        for system in "abc"
    ]
    assert rows["systems"]["within-system pearson"] == pytest.approx(sum(within) / 3, abs=1e-9)
    assert rows["systems"]["pearson"] == pytest.approx(_pearson_by_hand(scores, list(human)), abs=1e-9)
    assert "within-system pearson" not in rows["one system"]
    table = union_dev_suite.to_markdown({"tiny": rows}, rated, [])
    assert f"(within systems {sum(within) / 3:.3f})" in table


def test_the_mans_halves_are_read_with_their_systems_and_an_oracle_reference(tmp_path, monkeypatch):
    folder = tmp_path / "dev-annotations"
    folder.mkdir()
    made_up = {
        "roc": [
            (f"{p}:{s}", h, s)
            for p, h, s in zip("112233", [3, 1, 4, 2, 5, 1.5], ["gpt", "s2s"] * 3, strict=True)
        ],
        "wp": [
            (f"{p}:{s}", h, s)
            for p, h, s in zip("112233", [2, 2.5, 3, 1, 4, 2], ["gpt", "fusion"] * 3, strict=True)
        ],
    }
    for domain, rows in made_up.items():
        lines = [
            json.dumps({"id": i, "text": f"story  {i} .\n it ends .", "human": h, "system": s, "prompt": "1"})
            for i, h, s in rows
        ]
        (folder / f"mans_{domain}_dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("STORY_QUALITY_DATA", str(tmp_path))
    roc = dev_sets.mans_set("roc")
    assert roc.name == "MANS-ROC dev"
    assert roc.stories[0] == "story 1:gpt . it ends ."
    assert roc.human.tolist() == [3, 1, 4, 2, 5, 1.5] and roc.systems == ["gpt", "s2s"] * 3
    oracle = roc.references["each system's mean rating (oracle)"]
    assert oracle["pearson"] == pytest.approx(_pearson_by_hand([4, 1.5] * 3, [3, 1, 4, 2, 5, 1.5]))
    assert "within-system pearson" in roc.references["distinct 3-grams (no model)"]
    wp = dev_sets.mans_set("wp")
    assert wp.name == "MANS-WP dev" and wp.systems == ["gpt", "fusion"] * 3


def test_a_set_that_lists_each_raters_rating_gets_the_raters_ceiling():
    """Each rater against the mean of the other raters (SciPy's coefficients), averaged over the raters."""
    from scipy import stats

    rng = np.random.default_rng(3)
    quality = rng.normal(size=12)
    raters = np.clip(np.round(quality[:, None] + 2 + rng.normal(0, 0.8, (12, 5))), 0, 4)
    human = raters.mean(axis=1)
    stories = [f"story {i} " + "word " * int(rng.integers(3, 9)) for i in range(12)]
    rated = dev_sets.with_baseline("rated", stories, human, {}, raters=raters)
    others = [np.delete(raters, k, axis=1).mean(axis=1) for k in range(5)]
    functions = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    expected = {
        m: np.mean([functions[m](raters[:, k], others[k]).statistic for k in range(5)]) for m in METHODS
    }
    assert rated.references[dev_sets.CEILING] == pytest.approx(expected, abs=1e-12)
    assert dev_sets.CEILING not in dev_sets.with_baseline("plain", stories, human, {}).references


def test_a_registered_metric_is_a_row_scored_through_its_registry_scorer():
    read = union_dev_suite.member_scorer("metric:union", 2, None, None)
    direct = UnionScorer().score(STORIES, batch_size=2).scores
    assert read("set", STORIES).tolist() == direct
    assert (
        union_dev_suite.member_scorer("metric:union:scores", 2, None, None)("set", STORIES).tolist() == direct
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("metric:bleu", "no metric 'bleu'; the registry has union, gruen"),
        ("metric:union:fluency", "no per-text 'fluency'"),
    ],
)
def test_a_metric_row_the_registry_cannot_give_is_refused_naming_it(spec, message):
    with pytest.raises(ValueError, match=re.escape(f"{spec}: ") + ".*" + re.escape(message)):
        union_dev_suite.member_scorer(spec, 2, None, None)


def test_a_metric_row_is_its_scores_or_a_part_whatever_its_row_keys_name(monkeypatch):
    """gruen's row keys name its aspects, not ``scores``: ``metric:gruen`` is still its scores."""

    class Result:
        def __init__(self, texts):
            self.texts = texts

        def as_dict(self):
            return {"scores": [0.5] * len(self.texts), "grammaticality": [0.25] * len(self.texts)}

    class Scorer:
        def score(self, texts, batch_size):
            return Result(texts)

    monkeypatch.setattr(union_dev_suite, "_loaded_metric", lambda name: Scorer())
    monkeypatch.setattr(union_dev_suite, "_METRIC_RESULTS", {})
    assert union_dev_suite.member_scorer("metric:gruen", 2, None, None)("set", STORIES).tolist() == [0.5] * 5
    part = union_dev_suite.member_scorer("metric:gruen:grammaticality", 2, None, None)
    assert part("set", STORIES).tolist() == [0.25] * 5
