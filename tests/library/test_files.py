"""The library's one reader of input files and its rule for output files."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from story_quality import input_files, score_file
from story_quality.input_files import read_records

REPO = pathlib.Path(__file__).resolve().parents[2]


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


# --- output files ---


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


def test_an_output_is_never_an_input_by_path_symbolic_link_or_hard_link(tmp_path):
    source = write(tmp_path / "in.txt", "story\n")
    (tmp_path / "sym.jsonl").symlink_to(source)
    os.link(source, tmp_path / "hard.jsonl")
    for output in (source, tmp_path / "." / "in.txt", tmp_path / "sym.jsonl", tmp_path / "hard.jsonl"):
        with pytest.raises(score_file.ScoreFileError, match="writing it would destroy the input"):
            score_file.refuse_inputs(output, [source])
    score_file.refuse_inputs(tmp_path / "new.jsonl", [source])


def test_a_claim_keeps_a_second_run_off_and_leaves_nothing_behind(tmp_path):
    output = tmp_path / "out.jsonl"
    with score_file.claim_output(output):
        assert (tmp_path / "out.jsonl.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(score_file.ScoreFileError, match=rf"being written by process {os.getpid()}"):
            with score_file.claim_output(output):
                pass
    assert list(tmp_path.iterdir()) == []  # the lock went, and so did the empty output it never wrote


def test_a_claim_in_another_process_is_seen_and_released_when_that_process_dies(tmp_path):
    output = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import pathlib, sys, time\nfrom story_quality import score_file\n"
         "with score_file.claim_output(pathlib.Path(sys.argv[1])):\n    print('held', flush=True)\n"
         "    time.sleep(60)", str(output)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(
            score_file.ScoreFileError, match=rf"process {holder.pid} \(it holds .*out\.jsonl\.lock\)"
        ):
            with score_file.claim_output(output):
                pass
    finally:
        holder.kill()
        holder.wait()
    with score_file.claim_output(output):  # killed: its lock file stays, its lock does not
        output.write_text(json.dumps({"index": 0}) + "\n")
    assert output.exists() and not (tmp_path / "out.jsonl.lock").exists()


def test_one_lock_per_file_whatever_path_names_it(tmp_path, monkeypatch):
    output = tmp_path / "out.jsonl"
    output.write_text("")
    (tmp_path / "link.jsonl").symlink_to(output)
    os.link(output, tmp_path / "hard.jsonl")
    monkeypatch.chdir(tmp_path)
    names = [tmp_path / "link.jsonl", pathlib.Path("out.jsonl"), tmp_path / "sub" / ".." / "out.jsonl"]
    (tmp_path / "sub").mkdir()
    with score_file.claim_output(output):
        assert score_file.being_written(output) == f"process {os.getpid()}"
        for name in [*names, tmp_path / "hard.jsonl"]:
            with pytest.raises(score_file.ScoreFileError, match="is being written by"):
                with score_file.claim_output(name):
                    pass
        assert score_file.being_written(tmp_path / "hard.jsonl") is not None
    with score_file.claim_output(tmp_path / "link.jsonl"):  # the lock lies beside the real file
        assert (tmp_path / "out.jsonl.lock").exists() and not (tmp_path / "link.jsonl.lock").exists()
        for name in (output, pathlib.Path("out.jsonl")):
            with pytest.raises(score_file.ScoreFileError, match=rf"being written by process {os.getpid()}"):
                with score_file.claim_output(name):
                    pass
    assert score_file.being_written(output) is None
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "hard.jsonl",
        "link.jsonl",
        "out.jsonl",
        "sub",
    ]


def test_a_pipe_or_device_is_refused_and_gets_no_lock(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for output in (fifo, pathlib.Path("/dev/null")):
        with pytest.raises(score_file.ScoreFileError, match="is not a regular file"):
            with score_file.claim_output(output):
                pass
    assert [path.name for path in tmp_path.iterdir()] == ["pipe"] and not pathlib.Path(
        "/dev/null.lock"
    ).exists()
