"""``story-quality compare``: per-system intervals and paired tests on rows matched by id, refusals, the picture."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import numpy as np
import pytest
from tiny_models import save_union_checkpoint

from story_quality import cli, score_file
from story_quality.cli import compare as compare_command
from story_quality.cli import plot
from story_quality.evaluation import comparison, significance
from story_quality.union import human_scale
from story_quality.union.normalization import ROC_STORIES

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
    result = comparison.compare_files(files, resamples=200, seed=3)
    assert [s.name for s in result.systems] == ["a.jsonl", "b.jsonl"]
    assert result.systems[0].interval == significance.bootstrap_interval(a, 200, 3)
    assert result.systems[1].interval == significance.bootstrap_interval([b[i] for i in shuffled], 200, 3)
    (pair,) = result.pairs
    assert (pair.a, pair.b) == ("a.jsonl", "b.jsonl")
    assert pair.result == significance.compare_paired(a, b, resamples=200, seed=3)
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
    by_prompt = comparison.compare_files([first, second], id_column="prompt", resamples=100)
    assert by_prompt.pairs[0].result == significance.compare_paired(a, b, resamples=100, seed=0)
    by_index = comparison.compare_files([first, second], resamples=100)
    assert by_index.pairs[0].result.difference.estimate == pytest.approx(np.mean(b) - np.mean(a))
    assert by_index.pairs[0].result != by_prompt.pairs[0].result


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
    together = comparison.compare_files([merged], system_column="system", resamples=100)
    apart = comparison.compare_files(
        [write_scores(tmp_path / "base.jsonl", a), write_scores(tmp_path / "new.jsonl", b)], resamples=100
    )
    assert [s.name for s in together.systems] == ["base", "new"]
    assert [s.interval for s in together.systems] == [s.interval for s in apart.systems]
    assert together.pairs[0].result == apart.pairs[0].result


def test_another_tools_signature_is_compared_as_an_opaque_label_when_the_column_is_named(tmp_path, capsys):
    """A file whose signature is not this package's: with --score-column it is read, equal labels compare
    and a different one is refused in one line; without it, the file is named as not a score output."""
    a = write_scores(tmp_path / "a.jsonl", system_scores(0), signature="mytool")
    b = write_scores(tmp_path / "b.jsonl", system_scores(1), signature="mytool")
    result = comparison.compare_files([a, b], score_column="union", resamples=50)
    assert result.signature == "mytool" and len(result.pairs) == 1 and result.human == []
    garbage = write_scores(tmp_path / "c.jsonl", system_scores(2), signature="garbage")
    assert cli.main(["compare", str(a), str(garbage), "--score-column", "union", "--resamples", "50"]) == 2
    assert "were scored differently" in capsys.readouterr().err
    with pytest.raises(score_file.ScoreFileError, match="not an output of story-quality score"):
        comparison.compare_files([a, b])


def test_different_signatures_are_refused_naming_both_files(tmp_path):
    other = SIGNATURE.replace("window:48", "window:32")
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1), signature=other)
    with pytest.raises(score_file.ScoreFileError) as error:
        comparison.compare_files([first, second])
    message = str(error.value)
    assert f"{first} and {second} were scored differently" in message
    assert SIGNATURE in message and other in message


def test_files_of_the_two_fp32_libraries_compare_and_other_precisions_do_not(tmp_path):
    """fp32 and fp32-onednn scores agree within the signature's 1e-6 bound: one scale; bf16 is another."""
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    onednn = write_scores(
        tmp_path / "b.jsonl", system_scores(1), signature=SIGNATURE.replace("|fp32", "|fp32-onednn")
    )
    assert len(comparison.compare_files([first, onednn], resamples=40).pairs) == 1
    bf16 = write_scores(
        tmp_path / "c.jsonl", system_scores(2), signature=SIGNATURE.replace("|fp32", "|bf16-autocast")
    )
    with pytest.raises(score_file.ScoreFileError, match="were scored differently"):
        comparison.compare_files([first, bf16], resamples=40)


def test_a_human_scale_part_alone_does_not_make_signatures_differ(tmp_path):
    rescaled = f"{SIGNATURE}|human-roc:sha256:abcdefabcdef"
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1), signature=rescaled)
    assert len(comparison.compare_files([first, second], resamples=40).pairs) == 1


def test_different_rows_are_refused_for_a_paired_test_and_allowed_without_it(tmp_path):
    first = write_scores(tmp_path / "a.jsonl", system_scores(0, 10))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1, 12))
    with pytest.raises(
        score_file.ScoreFileError,
        match=r"hold different rows: 0 indexs only in the first.*2 only in the second \(first: \[10\]\).*--no-paired",
    ):
        comparison.compare_files([first, second])
    result = comparison.compare_files([first, second], paired=False, resamples=40)
    assert [s.n for s in result.systems] == [10, 12] and result.pairs == []


def test_skipped_rows_are_left_out_and_counted(tmp_path):
    path = write_scores(tmp_path / "a.jsonl", system_scores(0, 5))
    lines = path.read_text().splitlines()
    lines[2] = json.dumps({"index": 2, "line": 3, "skipped": "empty"})
    path.write_text("\n".join(lines) + "\n" + json.dumps({"signature": SIGNATURE, "rows": 5}) + "\n")
    (system,) = comparison.compare_files([path], resamples=40).systems
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
    with pytest.raises(score_file.ScoreFileError, match=message):
        comparison.compare_files([path, write_scores(tmp_path / "b.jsonl", system_scores(1, 5))])


def test_a_row_edited_after_score_sealed_it_is_refused_naming_file_and_line(tmp_path):
    sealed = [{"index": i, "line": i + 1, "union": x} for i, x in enumerate(system_scores(0, 5))]
    sealed[0] = {"index": 0, "line": 1, "signature": SIGNATURE, "union": sealed[0]["union"]}
    path = tmp_path / "a.jsonl"
    path.write_text("".join(score_file.seal(row) for row in sealed))
    other = write_scores(tmp_path / "b.jsonl", system_scores(1, 5))
    assert comparison.compare_files([path, other], resamples=40).systems[0].n == 5
    lines = path.read_text().splitlines()
    edited = json.loads(lines[2]) | {"union": 0.99}
    path.write_text("\n".join([*lines[:2], json.dumps(edited), *lines[3:]]) + "\n")
    with pytest.raises(
        score_file.ScoreFileError, match=r"a\.jsonl:3: this row was changed after story-quality score"
    ):
        comparison.compare_files([path, other], resamples=40)


def test_the_command_prints_a_table_or_json_and_exits_2_on_a_refusal(tmp_path, capsys):
    first = write_scores(tmp_path / "a.jsonl", system_scores(0))
    second = write_scores(tmp_path / "b.jsonl", system_scores(1, shift=0.1))
    assert cli.main(["compare", str(first), str(second), "--resamples", "50", "--seed", "4"]) == 0
    table = capsys.readouterr().out
    expected = comparison.compare_files([first, second], resamples=50, seed=4)
    assert f"b.jsonl - a.jsonl: {expected.pairs[0].result.difference.estimate:+.4f}" in table
    assert f"{expected.systems[0].interval.estimate:.4f}" in table and "approximate randomization" in table
    assert cli.main(["compare", str(first), str(second), "--resamples", "50", "--seed", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected.to_dict()))
    assert cli.main(["compare", str(first), str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err
    assert cli.main(["compare", str(first), "--resamples", "0"]) == 2


def test_the_picture_is_a_png_and_only_a_picture_of_its_own_is_replaced(tmp_path, capsys):
    files = [write_scores(tmp_path / f"{name}.jsonl", system_scores(i)) for i, name in enumerate("abc")]
    picture = tmp_path / "cmp.png"
    arguments = ["compare", *map(str, files), "--resamples", "40", "--plot", str(picture)]
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
    result = comparison.compare_files(files, resamples=40)
    assert [h.name for h in result.human] == ["human ROC stories (held back)", "human WP stories (held back)"]
    assert result.human[0].interval == significance.bootstrap_interval(
        sorted(round(x, 6) for x in human["roc"]), 40, 0
    )
    assert result.human_table == sha and result.notes == []
    plot.plot_comparison(result, tmp_path / "with-human.png")
    assert (tmp_path / "with-human.png").read_bytes().startswith(PNG_MAGIC)
    ranked = [
        write_scores(tmp_path / f"{n}.jsonl", system_scores(i), percentile=[50.0] * 40)
        for i, n in enumerate("cd")
    ]
    assert (
        comparison.compare_files(ranked, score_column="percentile", resamples=40).human == []
    )  # not raw scores
    table.write_text(table.read_text().replace('"n": 50', '"n": 51'))
    with pytest.raises(score_file.ScoreFileError, match="tiny.json is damaged or was changed"):
        comparison.compare_files(files, resamples=40)


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
    assert cli.main(["compare", *map(str, outputs), "--resamples", "40", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    scores = [[json.loads(line)["union"] for line in path.read_text().splitlines()] for path in outputs]
    assert [s["mean"] for s in result["systems"]] == pytest.approx([np.mean(s) for s in scores])
    assert result["pairs"][0]["difference"] == pytest.approx(np.mean(scores[1]) - np.mean(scores[0]))
    assert result["notes"][0] == (
        f"no human scale table for {result['signature'].split('|')[2][11:]}; tables exist for default"
    )
    assert "only 6 paired rows" in result["notes"][1]
    first = json.loads(outputs[0].read_text().splitlines()[0])
    assert first[score_file.INPUT_ROWS] == 6  # what compare reads to know the output is finished


# --- what compare refuses to vouch for (issue 47) ---


def sealed_scores(
    path: pathlib.Path, scores: list[float], input_rows: int | None = None, **extra
) -> pathlib.Path:
    """A file as story-quality score writes it now: sealed rows, the input's row count in the first."""
    first = {
        "signature": SIGNATURE,
        score_file.INPUT_ROWS: len(scores) if input_rows is None else input_rows,
    }
    rows = [{"index": i, "line": i + 1, **(first if i == 0 else {}), **{k: v[i] for k, v in extra.items()},
             "union": x} for i, x in enumerate(scores)]  # fmt: skip
    path.write_text("".join(score_file.seal(row) for row in rows))
    return path


def test_a_row_whose_seal_was_deleted_is_refused(tmp_path):
    path = sealed_scores(tmp_path / "a.jsonl", system_scores(0, 5))
    other = sealed_scores(tmp_path / "b.jsonl", system_scores(1, 5))
    lines = path.read_text().splitlines()
    edited = json.loads(lines[0]) | {"union": 0.99, "signature": "union|v9|checkpoint:mine"}
    edited.pop(score_file.ROW_HASH)
    path.write_text("\n".join([json.dumps(edited), *lines[1:]]) + "\n")
    with pytest.raises(
        score_file.ScoreFileError, match=r"a\.jsonl:1: this row carries no row_hash while the file"
    ):
        comparison.compare_files([path, other], resamples=40)


def test_an_unfinished_output_is_refused_unless_asked(tmp_path):
    cut = sealed_scores(tmp_path / "a.jsonl", system_scores(0, 48), input_rows=300)
    other = sealed_scores(tmp_path / "b.jsonl", system_scores(1, 48))
    with pytest.raises(
        score_file.ScoreFileError, match=r"a\.jsonl is unfinished: it holds 48 of the 300 rows"
    ):
        comparison.compare_files([cut, other], resamples=40)
    result = comparison.compare_files([cut, other], resamples=40, allow_unfinished=True)
    assert result.systems[0].n == 48 and any("--allow-unfinished" in note for note in result.notes)


def test_an_output_being_written_is_refused(tmp_path):
    path = sealed_scores(tmp_path / "a.jsonl", system_scores(0, 40))
    other = sealed_scores(tmp_path / "b.jsonl", system_scores(1, 40))
    with score_file.claim_output(path):
        with pytest.raises(score_file.ScoreFileError, match=r"a\.jsonl is still being written .*process"):
            comparison.compare_files([path, other], resamples=40)
    assert len(comparison.compare_files([path, other], resamples=40).pairs) == 1


def test_percentiles_against_different_human_tables_are_refused(tmp_path):
    ranks = [50.0] * 40
    roc = sealed_scores(tmp_path / "a.jsonl", system_scores(0), percentile=ranks)
    wp = sealed_scores(tmp_path / "b.jsonl", system_scores(1), percentile=ranks)
    for path, table in ((roc, "human-roc:sha256:aaaaaaaaaaaa"), (wp, "human-wp:sha256:bbbbbbbbbbbb")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        rows[0]["signature"] = f"{SIGNATURE}|{table}"
        path.write_text(
            "".join(score_file.seal({k: v for k, v in row.items() if k != "row_hash"}) for row in rows)
        )
    with pytest.raises(score_file.ScoreFileError, match="were scored differently"):
        comparison.compare_files([roc, wp], score_column="percentile", resamples=40)
    assert len(comparison.compare_files([roc, wp], resamples=40).pairs) == 1  # the raw scores are one scale


def test_the_same_file_twice_is_refused(tmp_path):
    path = write_scores(tmp_path / "a.jsonl", system_scores(0))
    (tmp_path / "link.jsonl").symlink_to(path)
    for second in (path, tmp_path / "." / "a.jsonl", tmp_path / "link.jsonl"):
        with pytest.raises(score_file.ScoreFileError, match="are the same file"):
            comparison.compare_files([path, second], resamples=40)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows[1].update(union=5.0), r"a\.jsonl:2: union is 5\.0, outside the range .*\[0, 1\]"),
        (lambda rows: rows[1].update(union=-3.0), r"a\.jsonl:2: union is -3\.0, outside the range"),
        (
            lambda rows: rows[1].update(union=10**400),
            r"a\.jsonl:2: union is 1000.*\(401 characters\), not a finite",
        ),
        (
            lambda rows: rows[1].update(index=True),
            r"a\.jsonl:2: index is True; it must be a string or a number",
        ),
        (lambda rows: rows[1].update(index=[1]), r"a\.jsonl:2: index is \[1\]; it must be"),
    ],
)
def test_values_no_score_file_holds_are_named(tmp_path, edit, message):
    test_bad_rows_are_named_by_file_and_line(tmp_path, edit, message)


def test_json_true_is_not_the_row_id_1(tmp_path):
    rows = [{"index": i, "union": x} for i, x in enumerate(system_scores(0, 3))]
    rows[0]["signature"], rows[1]["index"] = SIGNATURE, True
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(score_file.ScoreFileError, match="index is True"):
        comparison.compare_files(
            [path, write_scores(tmp_path / "b.jsonl", system_scores(1, 3))], resamples=40
        )


@pytest.mark.parametrize("column", ["index", "line", "text_hash", "input_rows"])
def test_a_row_identity_is_no_score_column(tmp_path, column):
    files = [write_scores(tmp_path / f"{n}.jsonl", system_scores(i)) for i, n in enumerate("ab")]
    with pytest.raises(
        score_file.ScoreFileError, match=f"--score-column {column}: that field says which row"
    ):
        comparison.compare_files(files, score_column=column, resamples=40)


def test_a_raw_line_separator_inside_a_json_row_is_read(tmp_path):
    path = write_scores(tmp_path / "a.jsonl", system_scores(0, 40), note=["one\u2028two"] * 40)
    raw = path.read_text().replace("\\u2028", "\u2028")
    assert "\u2028" in raw
    path.write_text(raw, encoding="utf-8")
    other = write_scores(tmp_path / "b.jsonl", system_scores(1, 40))
    assert comparison.compare_files([path, other], resamples=40).systems[0].n == 40


BAD_VALUES = [
    (["--seed", "-1"], "--seed must be an integer from 0"),
    (["--resamples", "1"], "--resamples must be from 40"),
    (["--resamples", str(10**12)], "--resamples must be from 40 .* got 1000000000000"),
    (["--confidence", "nan"], "--confidence must be between 0 and 1"),
    (["--system-column", "system"], r"all\.jsonl:1: system is \['a'\]; it must be a string or a number"),
    (["--plot", "{folder}"], r"--plot .*pics\.png is a folder"),
]


@pytest.mark.parametrize(("options", "message"), BAD_VALUES, ids=[" ".join(o) for o, _ in BAD_VALUES])
def test_every_bad_value_is_a_usage_error(tmp_path, capsys, options, message):
    rows = [{"index": i, "system": ["a"], "union": 0.5} for i in range(3)]
    rows[0]["signature"] = SIGNATURE
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "pics.png").mkdir()
    options = [option.format(folder=tmp_path / "pics.png") for option in options]
    assert cli.main(["compare", str(path), *options]) == 2
    err = capsys.readouterr().err
    assert re.search(f"story-quality compare: error: .*{message}", err) and "Traceback" not in err


def test_the_comparison_is_printed_when_the_picture_cannot_be_written(tmp_path, monkeypatch, capsys):
    files = [write_scores(tmp_path / f"{n}.jsonl", system_scores(i)) for i, n in enumerate("ab")]

    def refuse(comparison, path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(compare_command, "plot_comparison", refuse)
    assert (
        cli.main(["compare", *map(str, files), "--resamples", "40", "--plot", str(tmp_path / "c.png")]) == 2
    )
    out, err = capsys.readouterr()
    assert "b.jsonl - a.jsonl:" in out and "the picture could not be written (" in err


def test_one_shared_row_is_refused_and_an_interval_that_disagrees_with_p_gets_a_word(tmp_path):
    first = write_scores(tmp_path / "a.jsonl", [0.1])
    second = write_scores(tmp_path / "b.jsonl", [0.9])
    with pytest.raises(score_file.ScoreFileError, match="share 1 scored row: a paired test needs at least 2"):
        comparison.compare_files([first, second], resamples=40)
    edge = significance.PairedTest(40, significance.Interval(0.05, 0.001, 0.1, 0.95), 0.08, 0.07)
    (note,) = comparison.pair_notes([comparison.PairResult("a", "b", edge)])
    assert "the 95% interval excludes 0 but the paired bootstrap p = 0.0800 is not below 0.05" in note
    agree = significance.PairedTest(40, significance.Interval(0.05, 0.001, 0.1, 0.95), 0.01, 0.02)
    assert comparison.pair_notes([comparison.PairResult("a", "b", agree)]) == []
