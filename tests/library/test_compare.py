"""``story-quality compare``: per-system intervals and paired tests on rows matched by id, refusals, the picture."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest
from tiny_models import save_union_checkpoint

from story_quality import cli, compare, output_files, significance
from story_quality.union import human_scale
from story_quality.union.story_text import ROC_STORIES

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def system_scores(seed: int, n: int = 40, shift: float = 0.0) -> list[float]:
    return [float(x) for x in np.clip(np.random.default_rng(seed).beta(4, 3, n) + shift, 0, 1)]


def write_scores(
    path: pathlib.Path, scores: list[float], order=None, signature: str = SIGNATURE, **extra
) -> pathlib.Path:
    """A file as story-quality score writes it: index, line, the score; the signature in the first row."""
    order = range(len(scores)) if order is None else order
    rows = []
    for position, i in enumerate(order):
        row = {"index": i, "line": i + 1, **({"signature": signature} if position == 0 else {})}
        row.update({key: values[i] for key, values in extra.items()})
        rows.append({**row, "union": scores[i]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_each_system_and_pair_equals_the_statistics_on_rows_matched_by_index(tmp_path):
    a, b = system_scores(0), system_scores(1, shift=0.05)
    shuffled = np.random.default_rng(2).permutation(len(b)).tolist()  # b's file in another row order
    files = [write_scores(tmp_path / "a.jsonl", a), write_scores(tmp_path / "b.jsonl", b, order=shuffled)]
    result = compare.compare_files(files, resamples=200, seed=3)
    assert [s.name for s in result.systems] == ["a.jsonl", "b.jsonl"]
    assert result.systems[0].interval == significance.bootstrap_interval(a, 200, 3)
    assert result.systems[1].interval == significance.bootstrap_interval([b[i] for i in shuffled], 200, 3)
    (pair,) = result.pairs
    assert (pair.a, pair.b) == ("a.jsonl", "b.jsonl")
    assert pair.test == significance.compare_paired(a, b, 200, 3)
    assert result.signature == SIGNATURE and result.score_column == "union"


def test_id_column_matches_rows_by_their_id_not_their_position(tmp_path):
    a, b = system_scores(0, 30), system_scores(1, 30)
    ids = [f"prompt-{i}" for i in range(30)]
    order = np.random.default_rng(5).permutation(30).tolist()
    first = write_scores(tmp_path / "a.jsonl", a, prompt=ids)
    # b's rows come in another order and are numbered by position, so only prompt matches them
    rows = [{"index": k, "line": k + 1, "prompt": ids[i], "union": b[i]} for k, i in enumerate(order)]
    rows[0]["signature"] = SIGNATURE
    second = tmp_path / "b.jsonl"
    second.write_text("".join(json.dumps(row) + "\n" for row in rows))
    by_prompt = compare.compare_files([first, second], id_column="prompt", resamples=100)
    assert by_prompt.pairs[0].test == significance.compare_paired(a, b, 100, 0)
    by_index = compare.compare_files([first, second], resamples=100)
    assert by_index.pairs[0].test.difference.estimate == pytest.approx(np.mean(b) - np.mean(a))
    assert by_index.pairs[0].test != by_prompt.pairs[0].test


def test_one_file_with_a_system_column_equals_one_file_per_system(tmp_path):
    a, b = system_scores(0, 20), system_scores(1, 20)
    rows = [
        {"index": i, "system": name, "union": s[i]}
        for name, s in (("base", a), ("new", b))
        for i in range(20)
    ]
    rows[0]["signature"] = SIGNATURE
    merged = tmp_path / "all.jsonl"
    merged.write_text("".join(json.dumps(row) + "\n" for row in rows))
    together = compare.compare_files([merged], system_column="system", resamples=100)
    apart = compare.compare_files(
        [write_scores(tmp_path / "base.jsonl", a), write_scores(tmp_path / "new.jsonl", b)], resamples=100
    )
    assert [s.name for s in together.systems] == ["base", "new"]
    assert [s.interval for s in together.systems] == [s.interval for s in apart.systems]
    assert together.pairs[0].test == apart.pairs[0].test


def test_different_signatures_are_refused_naming_both_files(tmp_path):
    other = SIGNATURE.replace("window:48", "window:32")
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1), signature=other)
    with pytest.raises(compare.CompareError) as error:
        compare.compare_files([first, second])
    message = str(error.value)
    assert f"{first} and {second} were scored differently" in message
    assert SIGNATURE in message and other in message


def test_a_human_scale_part_alone_does_not_make_signatures_differ(tmp_path):
    rescaled = f"{SIGNATURE}|human-roc:sha256:abcdefabcdef"
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1), signature=rescaled)
    assert len(compare.compare_files([first, second], resamples=20).pairs) == 1


def test_different_rows_are_refused_for_a_paired_test_and_allowed_without_it(tmp_path):
    first = write_scores(tmp_path / "a.jsonl", system_scores(0, 10))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1, 12))
    with pytest.raises(
        compare.CompareError,
        match=r"hold different rows: 0 indexs only in the first.*2 only in the second \(first: \[10\]\).*--no-paired",
    ):
        compare.compare_files([first, second])
    result = compare.compare_files([first, second], paired=False, resamples=20)
    assert [s.n for s in result.systems] == [10, 12] and result.pairs == []


def test_skipped_rows_are_left_out_and_counted(tmp_path):
    path = write_scores(tmp_path / "a.jsonl", system_scores(0, 5))
    lines = path.read_text().splitlines()
    lines[2] = json.dumps({"index": 2, "line": 3, "skipped": "empty"})
    path.write_text("\n".join(lines) + "\n" + json.dumps({"signature": SIGNATURE, "rows": 5}) + "\n")
    (system,) = compare.compare_files([path], resamples=20).systems
    assert (system.n, system.skipped) == (4, 1)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[1].update(union=float("nan")), r"a\.jsonl:2: union is nan, not a finite number"),
        (lambda rows: rows[1].update(union="0.5"), r"a\.jsonl:2: union is '0\.5'"),
        (lambda rows: rows[2].update(index=1), r"a\.jsonl:3: index 1 appears twice"),
        (lambda rows: rows[2].pop("index"), r"a\.jsonl:3: no 'index' field \(--id-column"),
        (lambda rows: rows[0].pop("signature"), r"a\.jsonl carries no signature"),
        (lambda rows: rows[2].update(signature="gruen|v0.3.0"), r"a\.jsonl holds rows of several signatures"),
        (lambda rows: rows[1].pop("union"), r"a\.jsonl:2: no 'union' field \(--score-column"),
    ],
)
def test_bad_rows_are_named_by_file_and_line(tmp_path, edit, message):
    path = write_scores(tmp_path / "a.jsonl", system_scores(0, 5))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    edit(rows)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(compare.CompareError, match=message):
        compare.compare_files([path, write_scores(tmp_path / "b.jsonl", system_scores(1, 5))])


def test_a_row_edited_after_score_sealed_it_is_refused_naming_file_and_line(tmp_path):
    sealed = [{"index": i, "line": i + 1, "union": x} for i, x in enumerate(system_scores(0, 5))]
    sealed[0] = {"index": 0, "line": 1, "signature": SIGNATURE, "union": sealed[0]["union"]}
    path = tmp_path / "a.jsonl"
    path.write_text("".join(output_files.seal(row) for row in sealed))
    other = write_scores(tmp_path / "b.jsonl", system_scores(1, 5))
    assert compare.compare_files([path, other], resamples=20).systems[0].n == 5
    lines = path.read_text().splitlines()
    edited = json.loads(lines[2]) | {"union": 0.99}
    path.write_text("\n".join([*lines[:2], json.dumps(edited), *lines[3:]]) + "\n")
    with pytest.raises(
        compare.CompareError, match=r"a\.jsonl:3: this row was changed after story-quality score"
    ):
        compare.compare_files([path, other], resamples=20)


def test_the_command_prints_a_table_or_json_and_exits_2_on_a_refusal(tmp_path, capsys):
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1, shift=0.1))
    assert cli.main(["compare", str(first), str(second), "--resamples", "50", "--seed", "4"]) == 0
    table = capsys.readouterr().out
    expected = compare.compare_files([first, second], resamples=50, seed=4)
    assert f"b.jsonl - a.jsonl: {expected.pairs[0].test.difference.estimate:+.4f}" in table
    assert f"{expected.systems[0].interval.estimate:.4f}" in table and "approximate randomization" in table
    assert cli.main(["compare", str(first), str(second), "--resamples", "50", "--seed", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected.to_dict()))
    assert cli.main(["compare", str(first), str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err
    assert cli.main(["compare", str(first), "--resamples", "0"]) == 2


def test_the_picture_is_a_png_and_only_a_picture_of_its_own_is_replaced(tmp_path, capsys):
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("abc")]
    picture = tmp_path / "cmp.png"
    arguments = ["compare", *map(str, files), "--resamples", "30", "--plot", str(picture)]
    assert cli.main(arguments) == 0
    data = picture.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert cli.main(arguments) == 0  # its own picture is replaced
    notes = tmp_path / "notes.png"
    notes.write_bytes(PNG_MAGIC + b"someone else's picture")
    assert cli.main([*arguments[:-1], str(notes)]) == 2
    assert "was not written by story-quality compare" in capsys.readouterr().err
    assert notes.read_bytes() == PNG_MAGIC + b"someone else's picture"
    assert cli.main([*arguments[:-1], str(tmp_path / "no-folder" / "cmp.png")]) == 2


def test_without_matplotlib_the_error_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("ab")]
    assert cli.main(["compare", *map(str, files), "--plot", str(tmp_path / "cmp.png")]) == 2
    assert 'pip install "story-quality-metrics[plot]"' in capsys.readouterr().err
    assert not (tmp_path / "cmp.png").exists()


def test_a_checkpoint_with_a_human_table_gets_its_human_rows(tmp_path, monkeypatch):
    table = tmp_path / "tiny.json"
    human = {"roc": system_scores(7, 50), "wp": system_scores(8, 30)}
    sha = human_scale.write_table(table, SIGNATURE, None, {d: (d, s) for d, s in human.items()}, "test")
    monkeypatch.setitem(human_scale.TABLES, "tiny", human_scale.TableEntry(table, sha))
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("ab")]
    result = compare.compare_files(files, resamples=40)
    assert [h.name for h in result.human] == ["human ROC stories (held back)", "human WP stories (held back)"]
    assert result.human[0].interval == significance.bootstrap_interval(
        sorted(round(x, 6) for x in human["roc"]), 40, 0
    )
    assert result.human_table == sha and result.notes == []
    compare.plot_comparison(result, tmp_path / "with-human.png")
    assert (tmp_path / "with-human.png").read_bytes().startswith(PNG_MAGIC)
    ranked = [
        write_scores(tmp_path / f"{n}.jsonl", system_scores(i), percentile=[50.0] * 40)
        for i, n in enumerate("cd")
    ]
    assert (
        compare.compare_files(ranked, score_column="percentile", resamples=40).human == []
    )  # not raw scores
    table.write_text(table.read_text().replace('"n": 50', '"n": 51'))
    with pytest.raises(compare.CompareError, match="tiny.json is damaged or was changed"):
        compare.compare_files(files, resamples=40)


def test_files_that_story_quality_score_wrote_compare_end_to_end(tmp_path, capsys):
    checkpoint = save_union_checkpoint(
        tmp_path / "tiny-union", normalization=ROC_STORIES.to_dict(), max_length=48
    )
    good = ["Ken went to the store. He bought milk. He went home happy.", "She ran home. Then she ate."] * 3
    bad = ["Ken went to the store. Ken went to the store. He went home.", "She ate. She ran home."] * 3
    outputs = []
    for name, stories in (("good", good), ("bad", bad)):
        source, output = tmp_path / f"{name}.txt", tmp_path / f"{name}.jsonl"
        source.write_text("\n".join(stories) + "\n")
        arguments = ["--input", str(source), "--output", str(output), "--checkpoint", str(checkpoint)]
        assert cli.main(["score", "--metric", "union", *arguments]) == 0
        outputs.append(output)
    assert cli.main(["compare", *map(str, outputs), "--resamples", "20", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    scores = [[json.loads(line)["union"] for line in path.read_text().splitlines()] for path in outputs]
    assert [s["mean"] for s in result["systems"]] == pytest.approx([np.mean(s) for s in scores])
    assert result["pairs"][0]["difference"] == pytest.approx(np.mean(scores[1]) - np.mean(scores[0]))
    assert result["notes"] == [
        f"no human reference table for {result['signature'].split('|')[2][11:]}; tables exist for default"
    ]
