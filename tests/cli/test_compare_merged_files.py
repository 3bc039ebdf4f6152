"""``compare`` on a file merged the usual way (pandas ``concat`` then ``to_json``): a null field is an absent one."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from story_quality import cli, score_file
from story_quality.evaluation import comparison

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"


def score_rows(seed: int, n: int = 30, skipped: tuple[int, ...] = ()) -> list[dict]:
    """Rows as story-quality score writes them (the signature and input size in the first only)."""
    scores = np.random.default_rng(seed).beta(4, 3, n)
    rows = []
    for i in range(n):
        row = {"index": i, "line": i + 1}
        if i == 0:
            row |= {"signature": SIGNATURE, score_file.INPUT_ROWS: n}
        row |= {"skipped": "empty"} if i in skipped else {"union": float(scores[i])}
        rows.append(row)
    return rows


def as_merged_table(systems: dict[str, list[dict]]) -> list[dict]:
    """What ``pd.concat([...assign(system=name)]).to_json(orient="records", lines=True)`` writes: every
    row holds every column, null where its own file had none."""
    columns = list(dict.fromkeys(key for rows in systems.values() for row in rows for key in row))
    return [
        {**{column: row.get(column) for column in columns}, "system": name}
        for name, rows in systems.items()
        for row in rows
    ]


def write(path: pathlib.Path, rows: list[dict]) -> pathlib.Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_merged_file_with_null_columns_compares_as_the_files_it_was_made_of(tmp_path, capsys):
    systems = {"a": score_rows(0, skipped=(4,)), "b": score_rows(1, skipped=(4,))}
    merged = write(tmp_path / "merged.jsonl", as_merged_table(systems))
    assert json.loads(merged.read_text().splitlines()[1])["signature"] is None  # nulls, as pandas writes them
    apart = [write(tmp_path / f"{name}.jsonl", rows) for name, rows in systems.items()]
    together = comparison.compare_files([merged], system_column="system", resamples=200, seed=1)
    separately = comparison.compare_files(apart, resamples=200, seed=1)
    assert [s.interval for s in together.systems] == [s.interval for s in separately.systems]
    assert [(s.n, s.skipped) for s in together.systems] == [(29, 1), (29, 1)]
    assert together.pairs[0].result == separately.pairs[0].result
    assert (
        cli.main(["compare", str(merged), "--system-column", "system", "--json", "--resamples", "200"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["systems"][0]["n"] == 29


def test_a_sealed_row_with_null_columns_added_keeps_its_seal_and_an_edited_one_is_refused(tmp_path):
    sealed = [json.loads(score_file.seal(row)) for row in score_rows(2, n=10)]
    columns = list(dict.fromkeys(key for row in sealed for key in row))
    nulls = write(
        tmp_path / "nulls.jsonl", [{column: row.get(column) for column in columns} for row in sealed]
    )
    assert comparison.compare_files([nulls], paired=False, resamples=100).systems[0].n == 10
    edited = [dict(row) for row in json.loads("[" + ",".join(nulls.read_text().splitlines()) + "]")]
    edited[3]["union"] = round(edited[3]["union"], 10)  # what to_json's 10 digits do
    with pytest.raises(score_file.ScoreFileError) as refused:
        comparison.compare_files([write(tmp_path / "edited.jsonl", edited)], paired=False, resamples=100)
    assert str(refused.value) == (
        f"{tmp_path / 'edited.jsonl'}:4: this row was changed after story-quality score wrote it (its row_hash "
        "does not match); compare refuses edited scores. A file a table tool rewrote is changed too (pandas' "
        "to_json rounds scores to 10 digits): compare each system's own score file instead (story-quality "
        "compare a.jsonl b.jsonl)"
    )


def test_a_score_row_naming_a_key_twice_is_refused_by_the_one_reader(tmp_path):
    path = tmp_path / "twice.jsonl"
    path.write_text(
        f'{{"index": 0, "signature": "{SIGNATURE}", "union": 0.2}}\n{{"index": 1, "union": 0.9, "union": 0.1}}\n'
    )
    with pytest.raises(score_file.ScoreFileError) as refused:
        comparison.compare_files([path], paired=False, resamples=100)
    assert str(refused.value) == (
        f"{path}:2: the key 'union' appears twice in one object; which value is meant cannot be told (json would "
        "keep the last one): keep one; not an output of story-quality score"
    )


def test_a_signature_that_is_not_text_is_named_not_a_type_error(tmp_path):
    rows = score_rows(3, n=5)
    rows[2]["signature"] = 7
    with pytest.raises(
        score_file.ScoreFileError, match=r":3: signature is 7, not a signature story-quality score wrote"
    ):
        comparison.compare_files([write(tmp_path / "s.jsonl", rows)], paired=False, resamples=100)
