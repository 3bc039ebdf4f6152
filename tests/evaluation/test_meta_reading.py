"""Reading a ratings file and metrics' score files for meta-evaluation: what is read, and every
malformed file or unmatched row refused naming the file and line."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from story_quality import score_file
from story_quality.evaluation.meta_reading import read_all_scores, read_ratings, read_scores

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
TEXTS = [
    "A cat sat on the mat.",
    "The dog ran home.",
    "Rain fell all day long.",
    "She sang a song.",
    "He left.",
]


def write_jsonl(path: pathlib.Path, rows: list[dict]) -> pathlib.Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def ratings_rows(**columns) -> list[dict]:
    rows = [{"text": text, "human": float(i % 3 + 1)} for i, text in enumerate(TEXTS)]
    for name, values in columns.items():
        for row, value in zip(rows, values, strict=True):
            row[name] = value
    return rows


def write_score_file(
    path: pathlib.Path, texts: list[str], scores: list[float | None], order=None
) -> pathlib.Path:
    """As story-quality score writes it: index, line, text_hash, signature and input_rows in the first row, sealed."""
    lines = []
    for position, i in enumerate(order or range(len(texts))):
        record = {"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(texts[i])}
        if position == 0:
            record.update(signature=SIGNATURE, input_rows=len(texts))
        record.update({"skipped": "empty"} if scores[i] is None else {"union": scores[i]})
        lines.append(score_file.seal(record))
    path.write_text("".join(lines))
    return path


def test_ratings_jsonl_with_raters_systems_groups_and_missing_ratings(tmp_path):
    rows = ratings_rows(system=["a", "b", "a", "b", "a"], group=[1, 1, 2, 2, 3], id=list("vwxyz"))
    for row, raters in zip(
        rows, [[1, 2, 3], [None, 4, 5], [None, None, None], [2, 2, 2], [5, None, 1]], strict=True
    ):
        row["human"] = raters
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", rows))
    assert ratings.human[[0, 1, 3, 4]].tolist() == [2.0, 4.5, 2.0, 3.0]
    assert math.isnan(ratings.human[2]) and ratings.missing == 1
    assert ratings.raters.shape == (5, 3) and math.isnan(ratings.raters[1, 0])
    assert ratings.systems == ["a", "b", "a", "b", "a"] and ratings.groups == [1, 1, 2, 2, 3]
    assert ratings.ids == list("vwxyz") and ratings.lines == [1, 2, 3, 4, 5]


def test_ratings_csv_with_empty_cells_and_json_lists(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('text,human,system\n"One, two.",3,a\nThree.,,b\nFour.,"[1, 2, null]",a\n')
    with pytest.raises(
        score_file.ScoreFileError, match=r"r.csv:4: human is a list while .*r.csv:2 gives one number"
    ):
        read_ratings(path)
    path.write_text('text,human,system\n"One, two.",3,a\nThree.,,b\nFour.,4.5,a\n')
    ratings = read_ratings(path)
    assert ratings.texts == ["One, two.", "Three.", "Four."] and ratings.missing == 1
    assert ratings.human[[0, 2]].tolist() == [3.0, 4.5] and ratings.raters is None and ratings.groups is None


MALFORMED = [
    ('{"text": "a", "human": 1}\n{"text": "b", "human": \n', "r.jsonl:2: not valid JSON"),
    (
        '{"text": "a", "human": 1}\n{"text": "b", "human": "good"}\n',
        "r.jsonl:2: human is 'good', not a number",
    ),
    ('{"text": "a", "human": true}\n', "r.jsonl:1: human is true, not a number"),
    (
        '{"text": "a", "human": 1}\n{"text": "b", "human": NaN}\n',
        "r.jsonl:2: human is nan, not a finite number",
    ),
    (
        '{"text": "a", "human": [1, 2]}\n{"text": "b", "human": [1, 2, 3]}\n',
        "r.jsonl:2: human lists 3 ratings",
    ),
    ('{"text": "a", "human": [1, 2]}\n{"text": "b", "human": 3}\n', "r.jsonl:2: human is one number while"),
    ('{"text": "a", "human": []}\n', "r.jsonl:1: human is an empty list"),
    ('{"text": "a", "human": [1, "x"]}\n', "r.jsonl:1: human is 'x', not a number"),
    ('{"text": "a", "human": 1}\n\n{"human": 2}\n', "r.jsonl:3: no 'text' field"),
    ('{"text": "a", "human": 1}\n{"text": 7, "human": 2}\n', "r.jsonl:2: a non-text 'text' field"),
    ('{"text": "a", "human": 1}\n{"text": "b", "score": 2}\n', "r.jsonl:2: no 'human' field"),
    (
        '{"text": "a", "human": 1, "id": 4}\n{"text": "b", "human": 2, "id": 4}\n',
        "r.jsonl:2: id 4 was already given at",
    ),
    ('{"text": "a", "human": 1, "id": {"k": 1}}\n', "r.jsonl:1: id is"),
    ('{"text": "a", "human": 1, "system": "s"}\n{"text": "b", "human": 2}\n', "r.jsonl:2: no 'system' field"),
    ('{"text": "a", "human": 1, "group": [1]}\n', "r.jsonl:1: group is"),
    ('{"text": "a", "human": 1}\n[1, 2]\n', "r.jsonl, line 2: a JSON list"),
]


@pytest.mark.parametrize(("content", "message"), MALFORMED)
def test_every_malformed_ratings_file_is_refused_naming_the_line(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    with pytest.raises(score_file.ScoreFileError) as error:
        read_ratings(path)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("text,human\na,1\nb,x\n", "r.csv:3: human is 'x', not a number"),
        ("text,human\na,1\nb,1_0\n", "r.csv:3: human is '1_0', not a number"),  # float() reads 10
        ("text,human\na,1\nb,nan\n", "r.csv:3: human is 'nan', not a number"),
        ("text,human\na,1\nb,2,extra\n", "r.csv:3: 3 fields, but the header names 2"),
        ('text,human\na,1\nb,"[1, \n', "r.csv:3: field 2 opens a quote that is never closed"),
        ("text,score\na,1\n", "r.csv:2: no 'human' field"),
    ],
)
def test_every_malformed_ratings_csv_is_refused_naming_the_line(tmp_path, content, message):
    path = tmp_path / "r.csv"
    path.write_text(content)
    with pytest.raises(score_file.ScoreFileError) as error:
        read_ratings(path)
    assert message in str(error.value)


def test_a_column_asked_for_by_name_must_be_there_and_a_text_file_is_no_ratings_file(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", ratings_rows())
    assert read_ratings(path).systems is None
    with pytest.raises(score_file.ScoreFileError, match="no row has a 'generator' field"):
        read_ratings(path, system_column="generator", required=("system",))
    (tmp_path / "r.txt").write_text("a story\n")
    with pytest.raises(score_file.ScoreFileError, match=r"r.txt: a ratings file is"):
        read_ratings(tmp_path / "r.txt")


def test_score_rows_are_matched_by_index_and_text_hash_in_any_order(tmp_path):
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows()))
    scores = [0.1, 0.5, None, 0.7, 0.9]
    found = read_scores(write_score_file(tmp_path / "s.jsonl", TEXTS, scores, order=[3, 0, 4, 1, 2]), ratings)
    assert found.scores[[0, 1, 3, 4]].tolist() == [0.1, 0.5, 0.7, 0.9] and found.skipped == 1
    assert found.signature == SIGNATURE and found.column == "union" and found.matched_by == "index"


def test_a_score_row_of_another_text_is_refused_naming_both_lines(tmp_path):
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows()))
    texts = list(TEXTS)
    texts[2] = "Another story."
    with pytest.raises(
        score_file.ScoreFileError, match=r"s.jsonl:3: row 2 scored another text than line 3 of"
    ):
        read_scores(write_score_file(tmp_path / "s.jsonl", texts, [0.5] * 5), ratings)


def test_unmatched_and_twice_scored_rows_are_refused(tmp_path):
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows()))
    short = write_score_file(tmp_path / "short.jsonl", TEXTS[:4], [0.5] * 4)
    with pytest.raises(
        score_file.ScoreFileError, match=r"r.jsonl:5: no row of .*short.jsonl scores this story"
    ):
        read_scores(short, ratings)
    longer = write_score_file(tmp_path / "long.jsonl", [*TEXTS, "Extra."], [0.5] * 6)
    with pytest.raises(
        score_file.ScoreFileError, match=r"long.jsonl:6: index 5 is not a row of the ratings file"
    ):
        read_scores(longer, ratings)
    generic = write_jsonl(tmp_path / "g.jsonl", [{"index": 0, "union": 0.5}])
    with pytest.raises(score_file.ScoreFileError, match=r"g.jsonl:1: row 0 carries no text_hash"):
        read_scores(generic, ratings, score_column="union")


def test_a_generic_file_is_matched_by_id_and_its_score_is_its_one_numeric_field(tmp_path):
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows(id=list("abcde"))))
    rows = [
        {"id": key, "score": value} for key, value in zip("edcba", [5.0, 4.0, 3.0, 2.0, 1.0], strict=True)
    ]
    path = write_jsonl(tmp_path / "g.jsonl", rows)
    found = read_scores(path, ratings)
    assert found.scores.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and found.matched_by == "id"
    assert found.column == "score" and found.signature is None
    two = write_jsonl(tmp_path / "two.jsonl", [{**row, "other": 1} for row in rows])
    with pytest.raises(
        score_file.ScoreFileError, match="no signature and its numeric fields are other, score: name"
    ):
        read_scores(two, ratings)
    assert read_scores(two, ratings, score_column="score").scores.tolist() == found.scores.tolist()
    foreign = write_jsonl(tmp_path / "foreign.jsonl", [{**rows[0], "signature": "mytool"}, *rows[1:]])
    with pytest.raises(
        score_file.ScoreFileError, match="foreign.jsonl: .*not an output of story-quality score"
    ):
        read_scores(foreign, ratings)
    assert read_scores(foreign, ratings, score_column="score").signature == "mytool"
    write_jsonl(path, [*rows, {"id": "q", "score": 1.0}])
    with pytest.raises(score_file.ScoreFileError, match=r"g.jsonl:6: id 'q' is not in the ratings file"):
        read_scores(path, ratings, score_column="score")
    write_jsonl(path, [*rows, {"id": "a", "score": 1.0}])
    with pytest.raises(score_file.ScoreFileError, match=r"g.jsonl:6: id 'a' appears twice"):
        read_scores(path, ratings, score_column="score")


def test_a_row_matched_by_id_whose_text_hash_is_another_story_is_refused(tmp_path):
    """Swapped ids, or another study's file reusing the ids, would pair scores with the wrong stories."""
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows(id=list("abcde"))))
    rows = [
        {"id": key, score_file.TEXT_HASH: score_file.text_hash(text), "score": float(i)}
        for i, (key, text) in enumerate(zip("abcde", TEXTS, strict=True))
    ]
    assert read_scores(write_jsonl(tmp_path / "g.jsonl", rows), ratings).scores.tolist() == [0, 1, 2, 3, 4]
    rows[1]["id"], rows[3]["id"] = "d", "b"
    swapped = write_jsonl(tmp_path / "swapped.jsonl", rows)
    with pytest.raises(
        score_file.ScoreFileError,
        match=r"swapped.jsonl:2: id 'd' scored another text than line 4 of .*r.jsonl",
    ):
        read_scores(swapped, ratings)


@pytest.mark.parametrize("column", ["index", "line", "text_hash", "id"])
def test_a_score_column_that_names_a_rows_identity_is_refused(tmp_path, column):
    """As compare refuses it: ``--score-column index`` would meta-evaluate the row numbers."""
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows(id=list("abcde"))))
    path = write_score_file(tmp_path / "s.jsonl", TEXTS, [0.5] * 5)
    with pytest.raises(
        score_file.ScoreFileError, match=f"--score-column {column}: that field says which row"
    ):
        read_scores(path, ratings, score_column=column)


def test_one_column_for_both_system_and_group_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", ratings_rows(model=list("ababa")))
    with pytest.raises(
        score_file.ScoreFileError, match=r"r.jsonl: --system-column and --group-column both name 'model'"
    ):
        read_ratings(path, system_column="model", group_column="model")


def test_a_system_written_once_as_a_number_and_once_as_a_string_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", ratings_rows(system=[1, "1", 2, 2, 1.0]))
    with pytest.raises(
        score_file.ScoreFileError,
        match=r"r.jsonl:2: system '1' is a string while .*r.jsonl:1 gives the number 1",
    ):
        read_ratings(path)
    write_jsonl(path, ratings_rows(system=[1, 1.0, 2, 2.0, 1], group=["a", "a", "b", "b", "c"]))
    ratings = read_ratings(path)  # 1 and 1.0 are one number: one system
    assert len(set(map(repr, ratings.systems))) == 2


def test_an_edited_score_row_and_the_same_file_twice_are_refused(tmp_path):
    ratings = read_ratings(write_jsonl(tmp_path / "r.jsonl", ratings_rows()))
    path = write_score_file(tmp_path / "s.jsonl", TEXTS, [0.5] * 5)
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"union": 0.5', '"union": 0.9')
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    with pytest.raises(score_file.ScoreFileError, match=r"edited.jsonl:2: this row was changed"):
        read_scores(edited, ratings)
    with pytest.raises(score_file.ScoreFileError, match="are the same file"):
        read_all_scores([path, tmp_path / "." / "s.jsonl"], ratings, "id", None)
    with pytest.raises(score_file.ScoreFileError, match="is the ratings file"):
        read_all_scores([ratings.path], ratings, "id", None)
    assert np.isfinite(read_all_scores([path], ratings, "id", None)[0].scores).all()
