"""A score file's rows sealed, read back and resumed (story_quality.score_file.rows and .resume)."""

from __future__ import annotations

import pathlib

import pytest

from story_quality import score_file


def sealed_file(path: pathlib.Path, count: int = 3) -> pathlib.Path:
    rows = [{"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(f"story {i}"), "score": i / 7}
            for i in range(count)]  # fmt: skip
    path.write_text("".join(score_file.seal(row) for row in rows))
    return path


def test_sealed_rows_read_back_and_a_changed_one_is_named(tmp_path):
    path = sealed_file(tmp_path / "out.jsonl")
    rows = score_file.read_sealed_rows(path)
    assert [row["score"] for row in rows] == [0, 1 / 7, 2 / 7]
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(str(1 / 7), "0.5")
    path.write_text("".join(lines))
    with pytest.raises(score_file.ScoreFileError, match=r"out\.jsonl, line 2: this row was changed"):
        score_file.read_sealed_rows(path)


def test_seal_refuses_a_number_that_is_not_json():
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        score_file.seal({"index": 0, "score": float("nan")})


@pytest.mark.parametrize(
    ("tail", "kept"),
    [(b'{"index": 3, "li', True), (b"{", True), (b"notes", False), (b'{"a": 1}', False)],
)
def test_only_the_start_of_a_row_after_sealed_rows_is_dropped(tmp_path, tail, kept):
    path = sealed_file(tmp_path / "out.jsonl")
    whole = path.read_bytes()
    path.write_bytes(whole + tail)
    if kept:
        assert len(score_file.read_sealed_rows(path)) == 3 and path.read_bytes() == whole
    else:
        with pytest.raises(score_file.ScoreFileError, match="ends with a line this command did not write"):
            score_file.read_sealed_rows(path)
        assert path.read_bytes() == whole + tail


def identities(count: int) -> list[dict]:
    """What ``score`` expects of the rows of ``sealed_file``'s input (one story a line)."""
    return [{"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(f"story {i}")}
            for i in range(count)]  # fmt: skip


@pytest.mark.parametrize(("content", "dropped"), [(b'{"index": 0, "li', True), (b"{", False), (b"{}", False)])
def test_a_file_without_a_sealed_row_is_dropped_only_when_it_opens_as_a_row(tmp_path, content, dropped):
    path = tmp_path / "out.jsonl"
    path.write_bytes(content)
    if dropped:
        assert score_file.read_sealed_rows(path, expected=identities(3)) == [] and path.read_bytes() == b""
    else:
        with pytest.raises(score_file.ScoreFileError):
            score_file.read_sealed_rows(path)
        assert path.read_bytes() == content


OTHER_FILES = [
    b'{"index": 0, "text": "mine", "author": "me"}',  # a user's one-line JSON lines file
    b'{"index": 0, "line": 1, "text_hash": "0000000000000000", "union": 0.5',  # another input's row
    b'{"index": 0, "line": 1}',
    b'{"index": 0}',
]


@pytest.mark.parametrize("content", OTHER_FILES)
def test_a_one_line_file_that_opens_like_a_row_is_never_truncated(tmp_path, content):
    path = tmp_path / "mydata.jsonl"
    path.write_bytes(content)
    with pytest.raises(score_file.ScoreFileError, match="ends with a line this command did not write"):
        score_file.read_sealed_rows(path, expected=identities(3))
    assert path.read_bytes() == content


def test_the_cut_short_row_must_be_the_one_due_next(tmp_path):
    path = sealed_file(tmp_path / "out.jsonl", 2)
    whole = path.read_bytes()
    due = score_file.seal(identities(3)[2] | {"score": 0.25}).encode()
    for cut in (5, len(due) // 2, len(due) - 2):
        path.write_bytes(whole + due[:cut])
        assert len(score_file.read_sealed_rows(path, expected=identities(3))) == 2
        assert path.read_bytes() == whole
    wrong = score_file.seal(identities(4)[3] | {"score": 0.25}).encode()
    path.write_bytes(whole + wrong[: len(wrong) // 2])
    with pytest.raises(score_file.ScoreFileError, match="did not write"):
        score_file.read_sealed_rows(path, expected=identities(3))


def test_an_output_of_another_input_is_refused_before_its_cut_short_row_is_dropped(tmp_path):
    path = sealed_file(tmp_path / "out.jsonl", 2)
    content = path.read_bytes() + b'{"index": 2, "li'
    path.write_bytes(content)
    other = identities(3)
    other[1][score_file.TEXT_HASH] = score_file.text_hash("another story")
    with pytest.raises(score_file.ScoreFileError, match="row 2 is not the output of row 2"):
        score_file.read_sealed_rows(path, expected=other)
    assert path.read_bytes() == content


def test_another_input_is_named_by_its_first_differing_row(tmp_path):
    rows = score_file.read_sealed_rows(sealed_file(tmp_path / "out.jsonl"))
    expected = [{"index": i, score_file.TEXT_HASH: score_file.text_hash(f"story {i}")} for i in range(4)]
    score_file.refuse_other_input(rows, expected, tmp_path / "out.jsonl", tmp_path / "in.txt")
    expected[1][score_file.TEXT_HASH] = score_file.text_hash("another story")
    with pytest.raises(
        score_file.ScoreFileError, match=r"row 2 is not the output of row 2 of --input .*in\.txt"
    ):
        score_file.refuse_other_input(rows, expected, tmp_path / "out.jsonl", tmp_path / "in.txt")
    with pytest.raises(score_file.ScoreFileError, match="holds 3 rows but --input .* has 2"):
        score_file.refuse_other_input(rows, expected[:2], tmp_path / "out.jsonl", tmp_path / "in.txt")
