"""Reading UNION-format annotations and scores, evaluate_scores, and the CLI end to end."""

import json
from pathlib import Path

import numpy as np
import pytest
from annotation_files import write_annotations, write_lines

from benchmarks.correlation import evaluate_scores
from benchmarks.correlation.__main__ import main, parse_metric_spec
from benchmarks.correlation.robustness import biased_sets, error_type_sets, reasonable_vote_counts
from story_quality.evaluation.annotations import read_annotations
from story_quality.evaluation.correlation import correlate, williams_test


def tiny_corpus(n=40, seed=0):
    """Votes, matching error codes, and two metrics (one good, one lower-is-better) for n stories."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(size=n)
    votes = (rng.uniform(size=(n, 7)) < quality[:, None]).astype(int)
    codes = np.where(votes == 1, 0, rng.integers(1, 6, size=(n, 7)))
    good = votes.mean(axis=1) + rng.normal(scale=0.3, size=n)
    perplexity = 5 - 2 * votes.mean(axis=1) + rng.normal(scale=0.8, size=n)
    return votes, codes, good, perplexity


def write_published(directory, good, perplexity):
    directory.mkdir()
    write_lines(directory / "union.txt", [repr(float(v)) for v in good])
    write_lines(directory / "ppl.txt", [repr(float(v)) for v in perplexity])
    return directory


def test_evaluate_scores_orients_labels_and_compares(tmp_path):
    votes, codes, good, perplexity = tiny_corpus(60)
    path, codes_path = write_annotations(tmp_path, votes, codes)
    stories = read_annotations(path, codes_path)
    published = write_published(tmp_path / "metric_output", good, perplexity)
    noise = np.random.default_rng(5).normal(size=60)
    report = evaluate_scores(
        stories,
        {"noise": noise, "mine": perplexity},
        lower_is_better={"mine"},
        published_dir=published,
        biased_repeats=3,
    )
    assert [m.name for m in report.metrics] == ["noise", "-mine", "UNION", "-Perplexity"]
    assert report.reference == "noise"
    human = votes.mean(axis=1)
    assert report.metric("-Perplexity").overall.pearson == pytest.approx(
        -correlate(perplexity, human).pearson
    )
    assert report.metric("UNION").paper == pytest.approx((0.3687, 0.4599, 0.3386))
    assert report.metric("UNION").overall == correlate(good, human)

    union, ppl = report.metric("UNION"), report.metric("-Perplexity")
    r23 = np.corrcoef(union.scores, ppl.scores)[0, 1]
    expected = williams_test(union.overall.pearson, ppl.overall.pearson, r23, 60)
    assert report.williams[("UNION", "-Perplexity")].t == pytest.approx(expected.t)

    # Biased-set figures are the mean over exactly the seeded draws the sampler documents.
    draws = biased_sets(reasonable_vote_counts(votes), repeats=3, seed=0)
    assert len(report.biased) == 8
    for result, biased in zip(report.biased, draws, strict=True):
        assert result.sizes == tuple(len(d) for d in biased.draws) and result.usable == 3
        by_hand = np.mean([np.corrcoef(union.scores[d], human[d])[0, 1] for d in biased.draws])
        assert result.mean["UNION"]["pearson"] == pytest.approx(by_hand)
    assert [e.name for e in report.error_types] == [
        "repeated plot",
        "poor coherence",
        "conflicting logic",
        "chaotic scene",
    ]
    for result, subset in zip(report.error_types, error_type_sets(stories), strict=True):
        assert (result.n, result.n_reasonable, result.n_with_error) == (
            len(subset.indices),
            subset.n_reasonable,
            subset.n_with_error,
        )
        if result.correlations:
            assert result.correlations["UNION"] == correlate(good[subset.indices], human[subset.indices])
    # The paper's Table 7 figures travel with the published UNION only.
    assert report.metric("UNION").paper_error_types == {1: 0.6943, 2: 0.5144, 3: 0.4571, 4: 0.6744}
    assert report.metric("noise").paper_error_types == {}


def test_evaluate_scores_rejects_inconsistent_input(tmp_path):
    votes, _, good, perplexity = tiny_corpus(20)
    stories = read_annotations(write_annotations(tmp_path, votes)[0])
    with pytest.raises(ValueError, match="'short': 19 scores for 20"):
        evaluate_scores(stories, {"short": good[:-1]})
    with pytest.raises(ValueError, match="score 3 .* not a finite number"):
        evaluate_scores(stories, {"nan": np.where(np.arange(20) == 3, np.nan, good)})
    with pytest.raises(ValueError, match="not given"):
        evaluate_scores(stories, {"a": good}, lower_is_better={"b"})
    with pytest.raises(ValueError, match="share the table label"):
        evaluate_scores(stories, {"-x": good, "x": perplexity}, lower_is_better={"x"})
    with pytest.raises(ValueError, match="reference metric 'z'"):
        evaluate_scores(stories, {"a": good}, reference="z")


def test_metric_spec_parsing():
    assert parse_metric_spec("ppl=out/ppl.txt:lower") == ("ppl", Path("out/ppl.txt"), True)
    assert parse_metric_spec("my union=a:b.txt")[1:] == (Path("a:b.txt"), False)
    assert parse_metric_spec("x=s.json:higher")[2] is False
    for bad in ("no-equals.txt", "=s.txt", "x="):
        with pytest.raises(Exception, match="NAME=PATH"):
            parse_metric_spec(bad)


def test_cli_writes_tables_json_and_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    votes, codes, good, perplexity = tiny_corpus(60)
    path, codes_path = write_annotations(tmp_path, votes, codes)
    published = write_published(tmp_path / "metric_output", good, perplexity)
    mine = write_lines(tmp_path / "mine.txt", [repr(float(v)) for v in perplexity])
    out = tmp_path / "results"
    code = main(
        [str(path), "--error-types", str(codes_path), "--metric", f"mine={mine}:lower", "--published", str(published),
         "--output-dir", str(out), "--biased-repeats", "2"]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "| -mine |" in printed and "| UNION |" in printed and "Machine:" in printed
    assert "Biased test sets" in printed and "Error types" in printed
    assert "| *UNION, paper (Table 7)* | 0.6943 | 0.5144 | 0.4571 | 0.6744 | 0.3687 |" in printed
    assert "Sets: " in printed and " reasonable stories + repeated plot " in printed
    assert (out / "correlation.md").read_text(encoding="utf-8") in printed
    data = json.loads((out / "correlation.json").read_text())
    human = votes.mean(axis=1)
    assert data["metrics"][0]["name"] == "-mine"
    assert data["metrics"][0]["overall"]["kendall"] == pytest.approx(correlate(-perplexity, human).kendall)
    assert [b["level"] for b in data["biased_sets"]] == list(range(1, 9))
    assert all(b["repeats"] == 2 and len(b["sizes"]) == 2 for b in data["biased_sets"])
    assert [e["code"] for e in data["error_types"]] == [1, 2, 3, 4]
    union = next(m for m in data["metrics"] if m["name"] == "UNION")
    assert union["paper_error_types_pearson"]["1"] == pytest.approx(0.6943)
    for name in ("correlation_scatter.png", "correlation_biased.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_reports_bad_files_and_explains_itself(tmp_path, capsys):
    path = write_lines(tmp_path / "ant.txt", ["1 ||| a . ||| 1 0 1", "2 ||| b . ||| 0 x 1"])
    scores = write_lines(tmp_path / "s.txt", ["1", "2"])
    assert main([str(path), "--metric", f"s={scores}", "--no-plots", "--output-dir", str(tmp_path)]) == 2
    assert "ant.txt:2: votes must be integers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "Williams" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(path)])
    assert "at least one --metric" in capsys.readouterr().err
