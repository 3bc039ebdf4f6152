"""The one reader of score files (``ScoreFile``): what ``compare`` and ``meta-evaluate`` both refuse,
and its rows keyed by index or id (issue 79; the refusals of issue 78)."""

from __future__ import annotations

import json
import pathlib

import pytest

from story_quality import score_file
from story_quality.evaluation import comparison
from story_quality.score_file.reading import ScoreFile

UNION = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
GRUEN = "gruen|v0.3.0|lm:x@main|cola:y@main|lm-scoring:pll|coherence:off|fp32"


def rows_of(signature: str, scores: dict[str, list[float]], n: int = 6) -> list[dict]:
    """Rows as story-quality score writes them: the signature and the input's size in the first."""
    rows = []
    for i in range(n):
        row = {"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(f"story {i}")}
        if i == 0:
            row |= {"signature": signature, score_file.INPUT_ROWS: n}
        rows.append(row | {column: values[i] for column, values in scores.items()})
    return rows


def write(path: pathlib.Path, rows: list[dict], sealed: bool = False) -> pathlib.Path:
    path.write_text("".join(score_file.seal(row) if sealed else json.dumps(row) + "\n" for row in rows))
    return path


def test_a_signature_removed_under_another_files_header_is_refused(tmp_path):
    """Two systems' outputs merged into one file (seals dropped): the second's signature removed,
    its rows would pass under the first's signature, whatever checkpoint scored them."""
    first = [row | {"system": "a"} for row in rows_of(UNION, {"union": [0.5] * 6})]
    second = [row | {"system": "b"} for row in rows_of(UNION.replace("tiny", "other"), {"union": [0.6] * 6})]
    intact = write(tmp_path / "merged.jsonl", first + second)
    with pytest.raises(score_file.ScoreFileError, match="holds rows of several signatures"):
        comparison.compare_files([intact], system_column="system", paired=False, resamples=40)
    second[0].pop("signature")
    merged = write(tmp_path / "merged.jsonl", first + second)
    with pytest.raises(
        score_file.ScoreFileError, match=r"merged\.jsonl:7: this row records its input's size"
    ):
        comparison.compare_files([merged], system_column="system", paired=False, resamples=40)
    with pytest.raises(score_file.ScoreFileError, match="but no signature"):
        ScoreFile.read(merged, signed=False)  # meta-evaluate's reading of the same file


@pytest.mark.parametrize(("part", "value"), [("redundancy", 42.0), ("focus", -0.5), ("grammaticality", -1.0)])
def test_a_gruen_part_outside_its_range_is_refused_with_or_without_seals(tmp_path, part, value):
    scores = {"gruen": [0.5] * 6, "grammaticality": [0.7] * 6, "redundancy": [-0.1] * 6, "focus": [0.0] * 6}
    rows = rows_of(GRUEN, scores)
    assert (
        comparison.compare_files([write(tmp_path / "g.jsonl", rows)], paired=False, resamples=40).systems[0].n
        == 6
    )
    rows[2][part] = value
    for sealed in (True, False):
        path = write(tmp_path / "g.jsonl", rows, sealed)
        with pytest.raises(
            score_file.ScoreFileError, match=rf"g\.jsonl:3: {part} is {value!r}, outside the range"
        ):
            comparison.compare_files([path], paired=False, resamples=40)  # the gruen column compared


def test_rows_are_keyed_by_index_or_id_and_a_key_twice_is_refused(tmp_path):
    rows = rows_of(UNION, {"union": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    rows[4] = {key: value for key, value in rows[4].items() if key != "union"} | {"skipped": "empty"}
    for i, row in enumerate(rows):
        row["id"] = f"s{5 - i}"
    found = ScoreFile.read(write(tmp_path / "a.jsonl", rows))
    assert found.signature == UNION and found.score_column(None) == "union"
    by_index = found.scored_rows("union", "index")
    assert [(row.line, row.key, row.score) for row in by_index][3:] == [
        (4, 3, 0.4),
        (5, 4, None),
        (6, 5, 0.6),
    ]
    assert [row.key for row in found.scored_rows("union", "id")] == ["s5", "s4", "s3", "s2", "s1", "s0"]
    rows[5]["id"] = "s3"
    again = ScoreFile.read(write(tmp_path / "a.jsonl", rows))
    with pytest.raises(score_file.ScoreFileError, match=r"a\.jsonl:6: id 's3' appears twice"):
        again.scored_rows("union", "id")
    with pytest.raises(score_file.ScoreFileError, match="--score-column id: that field says which row"):
        again.score_column("id", ["id"])
