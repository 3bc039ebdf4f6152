"""The one strict reader of the files users hand the project (story_quality.input_files): rows, lines, encodings, refusals."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import pytest

from story_quality import input_files
from story_quality.input_files import read_records

REPO = pathlib.Path(__file__).resolve().parents[1]


def write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_bytes(text.encode("utf-8"))
    return path


# (file name, content, rows' texts, their lines)
READ_CASES = [
    ("ls.txt", "one\u2028still one\ntwo\n", ["one\u2028still one", "two"], [1, 2]),
    ("ps.txt", "one\u2029still one\n", ["one\u2029still one"], [1]),
    (
        "ff.txt",
        "one\x0cstill one\x0bstill\x1cone\nfour\n",
        ["one\x0cstill one\x0bstill\x1cone", "four"],
        [1, 2],
    ),
    ("nel.txt", "one\x85still one\n", ["one\x85still one"], [1]),
    ("crlf.txt", "one\r\ntwo\r\n", ["one", "two"], [1, 2]),
    ("blank.txt", "one\n\nthree", ["one", "", "three"], [1, 2, 3]),
    (
        "ls.jsonl",
        '{"text": "one\u2028still one"}\n\n{"text": "three"}\r\n',
        ["one\u2028still one", "three"],
        [1, 3],
    ),
    ("quoted.csv", 'id,text\n1,"one\nstill\n\none"\n\n2,six\n', ["one\nstill\n\none", "six"], [2, 7]),
    ("crlf.csv", 'id,text\r\n1,"one\r\nstill one"\r\n2,four\r\n', ["one\r\nstill one", "four"], [2, 4]),
    ("array.json", '[{"text": "one"},\n {"text": "two"}]', ["one", "two"], [1, 2]),
    ("spread.json", '[\n  {\n    "text": "one"\n  },\n\n  {"text": "two"}\n]\n', ["one", "two"], [2, 6]),
    ("pandas.csv", ',text\n0,"one, and ""two"""\n1,three', ['one, and "two"', "three"], [2, 3]),
    ("empty-field.csv", "id,text\n1,\n2,two\n", ["", "two"], [2, 3]),
]


@pytest.mark.parametrize(("name", "content", "texts", "lines"), READ_CASES, ids=[c[0] for c in READ_CASES])
def test_rows_are_split_at_newlines_only_and_start_at_their_first_line(tmp_path, name, content, texts, lines):
    records = read_records(write(tmp_path / name, content))
    assert [row["text"] for row in records.rows] == texts
    assert records.lines == lines


def test_a_txt_file_with_old_mac_or_windows_line_ends_gives_the_same_texts_as_with_newlines(tmp_path):
    texts = ["The cat sat.", "", "The dog ran home.", "Rain fell."]
    expected = read_records(write(tmp_path / "unix.txt", "\n".join(texts) + "\n"))
    assert [row["text"] for row in expected.rows] == texts and expected.lines == [1, 2, 3, 4]
    for name, end in (("mac.txt", "\r"), ("windows.txt", "\r\n")):
        found = read_records(write(tmp_path / name, end.join(texts) + end))
        assert (found.rows, found.lines) == (expected.rows, expected.lines), name
    three = read_records(write(tmp_path / "three.txt", "One.\rTwo.\rThree."))
    assert [row["text"] for row in three.rows] == ["One.", "Two.", "Three."]
    (tmp_path / "latin.txt").write_bytes(b"fine\rCaf\xe9\r")
    with pytest.raises(ValueError, match=r"latin\.txt, line 2: byte 0xe9 is not UTF-8"):
        read_records(tmp_path / "latin.txt")


# (file name, content, the error's words)
REFUSED_CASES = [
    ("bad.jsonl", '{"text": "one"}\n{"text": \n', r"bad\.jsonl:2: not valid JSON"),
    (
        "list.jsonl",
        '{"text": "one"}\n\n["two"]\n',
        r"list\.jsonl, line 3: a JSON list, expected a JSON object",
    ),
    ("lone-cr.csv", "id,text\n1,one\rtwo\n", r"lone-cr\.csv:2: a lone \\r line break in an unquoted field"),
    (
        "object.json",
        '{"data": [],\n "version": 1}',
        r"object\.json holds one JSON object \(keys \['data', 'version'\]\)",
    ),
    ("empty.txt", "\n \n", r"empty\.txt is empty"),
    ("table.tsv", "text\none\n", r"table\.tsv: unsupported file type"),
]


@pytest.mark.parametrize(("name", "content", "message"), REFUSED_CASES, ids=[c[0] for c in REFUSED_CASES])
def test_a_file_that_cannot_be_read_is_named_with_its_line(tmp_path, name, content, message):
    with pytest.raises(ValueError, match=message):
        read_records(write(tmp_path / name, content))


def test_encodings_utf16_with_its_mark_utf8_with_a_bom_and_bytes_that_are_not_utf8(tmp_path):
    (tmp_path / "16.txt").write_bytes("one\u2028two\nthree\n".encode("utf-16"))
    assert read_records(tmp_path / "16.txt").rows == [{"text": "one\u2028two"}, {"text": "three"}]
    (tmp_path / "bom.csv").write_bytes("\ufefftext\none\n".encode())
    assert read_records(tmp_path / "bom.csv").rows == [{"text": "one"}]
    (tmp_path / "latin.txt").write_bytes(b"fine\nCaf\xe9\n")
    with pytest.raises(ValueError, match=r"latin\.txt, line 2: byte 0xe9 is not UTF-8"):
        read_records(tmp_path / "latin.txt")
    (tmp_path / "16le.txt").write_bytes("no mark\n".encode("utf-16-le"))
    with pytest.raises(ValueError, match="looks like UTF-16 text without a byte-order mark"):
        read_records(tmp_path / "16le.txt")


QUOTE_HINT = (
    "a field holding a comma, a quote or a line break is written in double quotes, a quote inside it doubled: "
    '"He said ""hi"", then left."'
)
# (file name, content, the whole error message after the file's path): every way a messy file would
# otherwise cut a text at a comma, merge rows, or keep one of two values silently.
STRICT_CASES = [
    (
        "comma.csv",
        "text,label\nTom sat.,0\nThe dog ran home, and then it was happy.,1\n",
        ":3: 3 fields, but the header names 2 ('text', 'label'); a comma inside a text needs the field in "
        "double quotes",
    ),
    (
        "short.csv",
        "id,text\n1,one\n2\n",
        ":3: 1 field, but the header names 2 ('id', 'text'); every record has one field per column (an empty "
        "one is written as nothing between commas)",
    ),
    (
        "unclosed.csv",
        'text,label\n"The dog ran home,1\nTom sat.,0\n',
        f":2: field 1 opens a quote that is never closed (the rest of the file would be one text); {QUOTE_HINT}",
    ),
    (
        "unclosed-then-quoted.csv",
        'text,label\nTom sat.,0\n"The dog ran home,1\n"Ann ran.",0\n',
        ":3: field 1 goes on after its closing quote (its quote closes 1 line further down: a quote left "
        f"open?); {QUOTE_HINT}",
    ),
    (
        "stray.csv",
        'id,text\n1,He said "hi".\n',
        f":2: field 2 holds a quote but is not in quotes; {QUOTE_HINT}",
    ),
    ("after.csv", 'id,text\n1,"He said" hi\n', f":2: field 2 goes on after its closing quote; {QUOTE_HINT}"),
    (
        "header.csv",
        "\ntext,id,text\na,1,b\n",
        ":2: the header names the column 'text' twice; which one holds the text cannot be told: give each "
        "column its own name",
    ),
    (
        "key.jsonl",
        '{"text": "a"}\n\n{"text": "b", "text": "c"}\n',
        ":3: the key 'text' appears twice in one object; which value is meant cannot be told (json would "
        "keep the last one): keep one",
    ),
    (
        "key.json",
        '[{"text": "a"},\n {"id": 1,\n  "text": "b", "text": "c"}]',
        ":2: the key 'text' appears twice in one object; which value is meant cannot be told (json would "
        "keep the last one): keep one",
    ),
    ("comma.json", '[{"text": "a"}\n {"text": "b"}]', ":2: not valid JSON (expected , or ] but found '{')"),
    (
        "two.jsonl",
        '{"text": "a"} {"text": "b"}\n',
        ":1: not valid JSON (more after the object's end; JSON Lines holds one object a line)",
    ),
    ("after.json", '[{"text": "a"}]\n[{"text": "b"}]\n', ":2: not valid JSON (more after the closing ])"),
]


@pytest.mark.parametrize(("name", "content", "message"), STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_a_messy_file_is_refused_naming_its_file_and_line_never_cut_or_merged(
    tmp_path, name, content, message
):
    path = write(tmp_path / name, content)
    with pytest.raises(ValueError) as refused:
        read_records(path)
    assert str(refused.value) == f"{path}{message}"


def test_a_quoted_field_keeps_its_commas_quotes_and_line_breaks_whatever_the_line_ends(tmp_path):
    text = 'He said "hi, there",\nthen left.'
    for end in ("\n", "\r\n"):
        quoted = '"' + text.replace('"', '""').replace("\n", end) + '"'
        records = read_records(write(tmp_path / "q.csv", f"text,label{end}{quoted},1{end}Tom sat.,0"))
        assert records.rows == [
            {"text": text.replace("\n", end), "label": "1"},
            {"text": "Tom sat.", "label": "0"},
        ]
        assert records.lines == [2, 4]


def test_training_reads_files_and_names_data_files_through_the_library():
    """One home: the corpus reader and the training scripts' data-file table are the library's."""
    from story_quality.training import corpora, run_setup

    assert run_setup.DATA_FILE_BUILDERS is input_files.DATA_FILE_BUILDERS
    assert corpora.read_records is input_files.read_records


def test_the_corpus_reader_keeps_a_story_with_a_line_separator_whole(tmp_path):
    from story_quality.training.corpora import load_stories

    path = write(tmp_path / "stories.txt", "Ken ran.\u2028He fell.\nTom sat.\n")
    assert list(load_stories(str(path))["text"]) == ["Ken ran.\u2028He fell.", "Tom sat."]


def test_the_library_imports_nothing_from_training():
    probe = textwrap.dedent(
        """
        import sys
        import story_quality.cli, story_quality.input_files, story_quality.score_file
        print(sorted(m for m in sys.modules if m.startswith(("story_quality.training", "training"))))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"
