"""One spec per metric option: compute's checks and signature, the scorers, the score command's flags
and the cards' option tables all come from it and agree with it."""

from __future__ import annotations

import argparse
import inspect
import pathlib

import evaluate
import numpy
import pytest

from story_quality import cli, metric_path, options
from story_quality.cli import option_tables
from story_quality.cli import score as score_command
from story_quality.gruen import GruenScorer
from story_quality.gruen import scorer as gruen_scorer
from story_quality.gruen.options import GRUEN_OPTIONS, MODEL_OPTIONS
from story_quality.options import Option, OptionSpec
from story_quality.union import UnionScorer
from story_quality.union.options import UNION_OPTIONS

SPECS = {"union": UNION_OPTIONS, "gruen": GRUEN_OPTIONS}
SCORE = ["score", "--input", "a.txt", "--output", "b.jsonl"]


def keyword_defaults(function, skip: int) -> dict:
    """Each keyword parameter of ``function`` after the first ``skip`` (self, texts) with its default."""
    parameters = list(inspect.signature(function).parameters.values())[skip:]
    return {p.name: p.default for p in parameters if p.kind is not p.VAR_KEYWORD}


@pytest.mark.parametrize("name", SPECS)
def test_each_card_holds_the_table_its_spec_generates(name):
    card = option_tables.card_path(name).read_text(encoding="utf-8")
    table = option_tables.markdown_table(SPECS[name])
    assert table in card and option_tables.with_table(card, table, name) == card
    assert all(f"| `{option}` |" in table for option in SPECS[name].names)
    assert option_tables.main(["--check"]) == 0


def test_a_stale_table_is_found_and_a_card_without_markers_named(tmp_path, monkeypatch, capsys):
    card = option_tables.card_path("union").read_text(encoding="utf-8")
    stale = tmp_path / "union.md"
    stale.write_text(card.replace("| `percentiles` |", "| `percentile` |"), encoding="utf-8")
    monkeypatch.setattr(
        option_tables, "card_path", lambda metric: stale if metric == "union" else tmp_path / "none.md"
    )
    with pytest.raises(SystemExit) as exit_info:  # a card that is not there: an error, not "out of date"
        option_tables.main(["--check"])
    assert exit_info.value.code == 2 and "none.md" in capsys.readouterr().err
    (tmp_path / "none.md").write_text("no table here", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        option_tables.main(["--check"])
    assert exit_info.value.code == 2 and "none.md has no option table markers" in capsys.readouterr().err
    monkeypatch.setattr(option_tables, "specs", lambda: {"union": UNION_OPTIONS})
    assert option_tables.main(["--check"]) == 1
    assert option_tables.main([]) == 0 and stale.read_text(encoding="utf-8") == card


@pytest.mark.parametrize("name", SPECS)
def test_computes_keyword_arguments_are_the_spec_with_its_defaults(name):
    metric = evaluate.load(metric_path(name))
    assert keyword_defaults(type(metric)._compute, skip=2) == SPECS[name].defaults()
    described = metric._info().inputs_description
    assert all(option in described for option in SPECS[name].names)


def test_the_scorers_take_the_spec_with_its_defaults():
    assert keyword_defaults(UnionScorer.score, skip=2) == UNION_OPTIONS.defaults()
    models = keyword_defaults(GruenScorer.__init__, skip=1)
    models.pop("models")
    assert models == {name: GRUEN_OPTIONS[name].default for name in MODEL_OPTIONS}
    assert MODEL_OPTIONS == tuple(models)  # the constructor takes them in the spec's order
    run = {name: default for name, default in GRUEN_OPTIONS.defaults().items() if name not in MODEL_OPTIONS}
    assert keyword_defaults(GruenScorer.score, skip=2) == run


def test_flags_take_real_bools_and_counts_only():
    flag = GRUEN_OPTIONS["coherence"]
    assert flag.check(True) is True and flag.check(numpy.bool_(False)) is False
    for value in ("false", 1, None):
        with pytest.raises(TypeError, match="coherence must be True or False"):
            flag.check(value)
    count = UNION_OPTIONS["batch_size"]
    for value in (True, 1.5, "3"):
        with pytest.raises(TypeError, match="batch_size must be an integer >= 1"):
            count.check(value)
    assert UNION_OPTIONS["max_length"].check(None) is None and UNION_OPTIONS["max_length"].check(16) == 16
    with pytest.raises(TypeError, match="unknown argument 'batch'; did you mean 'batch_size'"):
        UNION_OPTIONS.check({"batch": 2})


def test_every_option_has_a_flag_in_the_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["score", "--help"])
    shown = capsys.readouterr().out
    assert all(f"  {option.flag}" in shown for spec in SPECS.values() for option in spec.options)
    assert "--no-coherence" in shown


def test_the_flags_reach_the_scorer(monkeypatch):
    given = {"lm_model": "lm", "cola_model": "cola", "sop_model": "sop"}
    given |= {"lm_revision": "r1", "cola_revision": "r2", "sop_revision": "r3"}
    flags = [part for name, value in given.items() for part in (GRUEN_OPTIONS[name].flag, value)]
    args = cli.parse_args(
        [*SCORE, "--metric", "gruen", *flags, "--coherence", "--lm-scoring", "pll", "--batch-size", "3"]
    )
    built, scored = [], []

    class Recording:
        def __init__(self, **models):
            built.append(models)

        def score(self, texts, **run):
            scored.append(run)
            return gruen_scorer.GruenResult([], [], [], [], [], "gruen|v0")

    monkeypatch.setattr(gruen_scorer, "GruenScorer", Recording)
    assert score_command.load_scorer(args, "cpu")([])["signature"] == "gruen|v0"
    assert built == [given]
    assert scored == [{"coherence": True, "lm_scoring": "pll", "batch_size": 3, "device": "cpu"}]
    union = cli.parse_args(
        [
            *SCORE,
            "--metric",
            "union",
            "--max-length",
            "20",
            "--long-stories",
            "head",
            "--percentiles",
            "human-wp",
        ]
    )
    assert options.given_flags(union, UNION_OPTIONS) == {
        "max_length": 20,
        "long_stories": "head",
        "percentiles": "human-wp",
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--metric", "union", "--batch-size", "0"],
            "argument --batch-size: batch_size must be an integer >= 1, got 0",
        ),
        (
            ["--metric", "union", "--max-length", "8"],
            "argument --max-length: max_length must be an integer >= 16",
        ),
        (
            ["--metric", "union", "--cola-revision", "main"],
            "--cola-revision is an option of gruen, not of union: drop it, or score with --metric gruen",
        ),
        (
            ["--metric", "gruen", "--max-length", "20"],
            "--max-length is an option of union, not of gruen: drop it, or score with --metric union",
        ),
        (
            ["--metric", "union", "--no-coherence", "--lm-scoring", "pll"],
            "--coherence, --lm-scoring are options of gruen, not of union: drop them, or score with --metric gruen",
        ),
        (["--metric", "union", "--chunk-size", "0"], "--chunk-size must be at least 1, got 0"),
    ],
)
def test_bad_flags_are_usage_errors_naming_them(capsys, argv, message):
    with pytest.raises(SystemExit) as done:
        cli.parse_args([*SCORE, *argv])
    error = capsys.readouterr().err
    assert done.value.code == 2 and message in error
    assert (
        "usage: story-quality score" in error and "story-quality score: error:" in error
    )  # the command's own


def test_an_option_two_metrics_take_differently_is_refused_and_a_spec_must_be_whole():
    one = OptionSpec("a", (Option("batch_size", "count", 32, "texts per pass"),))
    other = OptionSpec("b", (Option("batch_size", "count", 8, "texts per pass"),))
    with pytest.raises(ValueError, match="option batch_size: the metrics take it with different"):
        options.add_flags(argparse.ArgumentParser(), [one, other])
    with pytest.raises(ValueError, match="a choice option, and only one, lists its choices"):
        Option("mode", "choice", None, "how")
    with pytest.raises(ValueError, match="unknown kind 'number'"):
        Option("n", "number", 1, "how many")
    with pytest.raises(KeyError, match="a has no option 'device'"):
        one["device"]


def test_a_folder_given_as_a_path_is_a_model_name():
    assert GRUEN_OPTIONS["lm_model"].check(pathlib.Path("models/lm")) == "models/lm"
    with pytest.raises(TypeError, match="lm_revision must be a non-empty string, got str ''"):
        GRUEN_OPTIONS["lm_revision"].check("")
