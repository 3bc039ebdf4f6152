"""UNION's annotation files (strict), held-out story files (lenient) and per-story score files."""

import numpy as np
import pytest
from annotation_files import write_annotations, write_lines

from story_quality.evaluation.annotations import (
    AnnotationFormatError,
    read_annotations,
    read_held_out_stories,
    read_scores,
    split_record,
    write_scores,
)


def annotated_corpus(n, seed=0):
    """0/1 votes of 7 annotators and error codes that agree with them (0 exactly where the vote is 1)."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(size=n)
    votes = (rng.uniform(size=(n, 7)) < quality[:, None]).astype(int)
    codes = np.where(votes == 1, 0, rng.integers(1, 6, size=(n, 7)))
    return votes, codes


def test_reads_votes_codes_and_human_scores(tmp_path):
    votes, codes = annotated_corpus(6)
    path, codes_path = write_annotations(tmp_path, votes, codes)
    stories = read_annotations(path, codes_path)
    assert stories.ids == tuple(str(100 + i) for i in range(6))
    assert stories.stories[2] == "story number 2 . it ends ."
    np.testing.assert_array_equal(stories.votes, votes)
    np.testing.assert_array_equal(stories.error_codes, codes)
    np.testing.assert_allclose(stories.human_scores, votes.sum(axis=1) / 7)
    np.testing.assert_array_equal(stories.is_reasonable, votes.sum(axis=1) >= 4)


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("7 ||| a story without votes", r":3: expected 'ID \|\|\| story \|\|\| votes' \(3 fields\), found 2"),
        ("7 ||| a story ||| 1 0 2 1 1 1 1", r":3: votes must be integers in 0\.\.1, found '2'"),
        ("7 ||| a story ||| 1 0 1", r":3: 3 votes, but line 1 has 7"),
        ("7 |||  ||| 1 0 1 1 1 1 1", r":3: the story text is empty"),
        (" ||| a story ||| 1 0 1 1 1 1 1", r":3: the story ID is empty"),
        ("1 ||| a story ||| 1 0 1 1 1 1 1", r":3: story ID '1' already used on line 1"),
        ("7 ||| a story ||| ", r":3: no votes"),
        ("", r":3: expected 'ID"),
    ],
)
def test_malformed_annotation_lines_are_named_by_line_number(tmp_path, bad_line, message):
    good = ["1 ||| first story . ||| 1 1 1 1 0 0 0", "2 ||| second story . ||| 0 0 0 0 0 0 1"]
    path = write_lines(tmp_path / "ant.txt", [*good, bad_line, "9 ||| last story . ||| 1 1 1 1 1 1 1"])
    with pytest.raises(AnnotationFormatError, match=message):
        read_annotations(path)


def test_trailing_blank_lines_are_fine_but_an_empty_file_is_not(tmp_path):
    path = tmp_path / "ant.txt"
    path.write_text("1 ||| a . ||| 1 0 1\n2 ||| b . ||| 0 0 1\n\n\n", encoding="utf-8")
    assert len(read_annotations(path)) == 2
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(AnnotationFormatError, match="empty"):
        read_annotations(path)


def test_error_code_file_must_match_the_votes(tmp_path):
    votes, codes = annotated_corpus(5)
    path, _ = write_annotations(tmp_path, votes)
    wrong = codes.copy()
    row = int(np.flatnonzero(votes[:, 0] == 1)[0])
    wrong[row, 0] = 3  # an annotator who voted "reasonable" cannot report an error
    lines = [
        f"{100 + i} ||| story number {i} . it ends . ||| {' '.join(map(str, r))}" for i, r in enumerate(wrong)
    ]
    with pytest.raises(
        AnnotationFormatError, match=rf"ant_all.txt:{row + 1}: error codes .* disagree with the votes"
    ):
        read_annotations(path, write_lines(tmp_path / "ant_all.txt", lines))
    lines = [f"{100 + i} ||| another story {i} ||| {' '.join(map(str, r))}" for i, r in enumerate(codes)]
    with pytest.raises(AnnotationFormatError, match=r"other.txt:1: story '100' does not match"):
        read_annotations(path, write_lines(tmp_path / "other.txt", lines))
    with pytest.raises(AnnotationFormatError, match="error codes must be integers in 0..5, found '6'"):
        read_annotations(path, write_lines(tmp_path / "six.txt", ["100 ||| x ||| 6 0 0 0 0 0 0"]))


def test_scores_from_text_and_json_with_line_numbers_on_errors(tmp_path):
    np.testing.assert_array_equal(
        read_scores(write_lines(tmp_path / "s.txt", ["0.5", "-1e-3", "2"]), 3), [0.5, -1e-3, 2]
    )
    (tmp_path / "s.json").write_text("[1, 2.5, 3]")
    np.testing.assert_array_equal(read_scores(tmp_path / "s.json"), [1, 2.5, 3])
    (tmp_path / "o.json").write_text('{"scores": [0.25, 0.75], "mean": 0.5}')
    np.testing.assert_array_equal(read_scores(tmp_path / "o.json"), [0.25, 0.75])
    with pytest.raises(AnnotationFormatError, match=r"bad.txt:2: expected one number per line, found 'abc'"):
        read_scores(write_lines(tmp_path / "bad.txt", ["1", "abc", "3"]))
    with pytest.raises(AnnotationFormatError, match=r"nan.txt: line 3: expected a finite number"):
        read_scores(write_lines(tmp_path / "nan.txt", ["1", "2", "nan"]))
    with pytest.raises(AnnotationFormatError, match="3 scores, but there are 4 annotated stories"):
        read_scores(tmp_path / "s.txt", 4)
    (tmp_path / "b.json").write_text('[1, "x"]')
    with pytest.raises(AnnotationFormatError, match="item 2: expected a finite number, found 'x'"):
        read_scores(tmp_path / "b.json")


def test_scores_round_trip_through_write_scores(tmp_path):
    scores = [0.123456789, -2.5, 1e-9]
    write_scores(tmp_path / "s.txt", scores)
    np.testing.assert_allclose(read_scores(tmp_path / "s.txt", 3), scores, atol=5e-9)


def test_held_out_stories_read_annotation_lines_and_plain_lines(tmp_path):
    path = write_lines(
        tmp_path / "held.txt",
        [
            "7 ||| Ken went home . ||| 1 0 1",
            "",
            "  A plain story line .  ",
            "8 ||| votes not needed",
            "9||| x |||",
        ],
    )
    assert read_held_out_stories(path) == ["Ken went home .", "A plain story line .", "votes not needed", "x"]


def test_held_out_stories_still_need_a_story(tmp_path):
    path = write_lines(tmp_path / "held.txt", ["7 ||| fine . ||| 1", "8 |||  ||| 1 1"])
    with pytest.raises(AnnotationFormatError, match=r"held.txt:2: the story text is empty"):
        read_held_out_stories(path)


def test_one_parser_strict_and_lenient():
    assert split_record(" 7 ||| a b ||| 1 0 ", "f:1") == ("7", "a b", "1 0")
    assert split_record("||| a b", "f:1", strict=False) == ("", "a b", "")
    assert split_record("1 ||| a ||| 1 ||| extra", "f:1", strict=False) == ("1", "a", "1")
    with pytest.raises(
        AnnotationFormatError, match=r"f:1: expected 'ID \|\|\| story \|\|\| votes' \(3 fields\), found 2"
    ):
        split_record("||| a b", "f:1")
    with pytest.raises(AnnotationFormatError, match="found no"):
        split_record("no separator", "f:2", strict=False)
