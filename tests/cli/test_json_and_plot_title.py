"""``--json [FILE|-]`` reads the same on compare and meta-evaluate, and meta-evaluate's picture of one
metric keeps its titles inside the figure (issue 78)."""

from __future__ import annotations

import json

import pytest
from test_compare import system_scores, write_scores
from test_meta_evaluate import write_set

from story_quality import cli
from story_quality.cli import compare, meta_evaluate
from story_quality.evaluation.meta_evaluation import meta_evaluate_files


@pytest.mark.parametrize("spelling", [["--json"], ["--json", "-"]])
def test_json_alone_or_dash_prints_the_report_for_both_commands(tmp_path, capsys, spelling):
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("ab")]
    assert cli.main(["compare", *map(str, files), "--resamples", "40", *spelling]) == 0
    assert json.loads(capsys.readouterr().out)["systems"][0]["name"] == "a.jsonl"
    ratings, paths = write_set(tmp_path)
    assert cli.main(["meta-evaluate", str(ratings), *map(str, paths), "--resamples", "40", *spelling]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["n"] == 18 and "pooled Pearson" not in out  # the report in place of the table


def test_json_file_writes_the_report_for_both_commands_and_prints_the_table(tmp_path, capsys):
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("ab")]
    report = tmp_path / "cmp.json"
    argv = ["compare", *map(str, files), "--resamples", "40", "--json", str(report)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("signature: ") and "b.jsonl - a.jsonl" in out
    written = json.loads(report.read_text())
    assert written["written_by"] == compare.COMMAND and written["pairs"][0]["a"] == "a.jsonl"
    assert cli.main(argv) == 0  # its own report is replaced
    ratings, paths = write_set(tmp_path)
    meta = tmp_path / "meta.json"
    assert (
        cli.main(["meta-evaluate", str(ratings), *map(str, paths), "--resamples", "40", "--json", str(meta)])
        == 0
    )
    assert "pooled Pearson" in capsys.readouterr().out
    assert json.loads(meta.read_text())["written_by"] == meta_evaluate.COMMAND
    assert cli.main(["compare", *map(str, files), "--resamples", "40", "--json", str(meta)]) == 2
    assert "was not written by story-quality compare; it is left alone" in capsys.readouterr().err


def test_the_report_and_the_picture_in_one_file_are_refused_before_any_work(tmp_path, capsys):
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("ab")]
    ratings, paths = write_set(tmp_path)
    same = str(tmp_path / "out.png")
    for argv in (
        ["compare", *map(str, files)],
        ["meta-evaluate", str(ratings), *map(str, paths)],
    ):
        assert cli.main([*argv, "--resamples", "40", "--json", same, "--plot", same]) == 2
        captured = capsys.readouterr()
        assert captured.err.splitlines()[-1].endswith(f"--json and --plot name the same file {same}")
        assert captured.out == "" and not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("metrics", [1, 2])
def test_the_titles_of_the_picture_lie_inside_the_figure(tmp_path, monkeypatch, metrics):
    """With one metric the heading was wider than the one panel's figure and cut at both edges."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from story_quality.cli import meta_plot

    ratings, paths = write_set(tmp_path)
    evaluation = meta_evaluate_files(ratings, paths[:metrics], resamples=40)
    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda figure, path, **options: drawn.append(figure))
    meta_plot.plot_meta_evaluation(evaluation, tmp_path / "meta.png", software=meta_evaluate.COMMAND)
    (figure,) = drawn
    renderer = figure.canvas.get_renderer()
    titles = [figure.get_suptitle(), *(axes.get_title() for axes in figure.axes)]
    assert titles[0].startswith("18 rated stories") and all(titles)
    for text in [figure._suptitle, *(axes.title for axes in figure.axes)]:
        extent = text.get_window_extent(renderer)
        inside = figure.bbox.x0 <= extent.x0 and extent.x1 <= figure.bbox.x1
        assert inside and figure.bbox.y0 <= extent.y0 and extent.y1 <= figure.bbox.y1, text.get_text()
