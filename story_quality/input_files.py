"""Reading the text files users hand the project: one home for every reader.

``.txt`` is one text a line, ``.jsonl`` one JSON object a line, ``.json`` a JSON list of objects
(or JSON Lines), ``.csv`` a header and one record a row (a quoted field may span lines). Every
row comes back with the line it starts on, and every error names the file and line.

Lines end at ``\\n`` (or ``\\r\\n``) only: a form feed, U+2028 or U+2029 inside a story is part
of that story, never a new row (``str.splitlines`` would split there, so it is never used).
A file is UTF-8 (a byte-order mark is dropped) or UTF-16 with its byte-order mark; a binary
file, an empty one or a byte that is not UTF-8 is refused by name and line.
"""

from __future__ import annotations

import csv
import json
import pathlib
from collections.abc import Iterator
from typing import Any, NamedTuple

# Local record files the readers here take, by extension.
RECORD_SUFFIXES = (".txt", ".jsonl", ".json", ".csv")
# Local data files the training scripts read through ``datasets``, by extension: the builder of each.
DATA_FILE_BUILDERS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".parquet": "parquet"}


class Records(NamedTuple):
    """A file's rows (one dict each), the line each starts on, and its columns when a header names them."""

    rows: list[dict[str, Any]]
    lines: list[int]
    columns: list[str] | None = None


def read_text_file(path: pathlib.Path) -> str:
    """A text file's text, or an error naming the file (and line) when it cannot be one.

    Strict on purpose: a binary file, an empty file or a byte that is not UTF-8 stops the
    work with the file and line to fix, rather than turning into replacement characters
    inside stories.
    """
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with its byte-order mark: a text file all the same
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ValueError(
                f"{path}: starts like UTF-16 but does not decode as it; convert it to UTF-8."
            ) from None
    head = data[:8192]
    if b"\0" in head:
        if head.count(b"\0") * 3 >= len(head):  # every other byte NUL: UTF-16 text without a mark
            raise ValueError(
                f"{path} looks like UTF-16 text without a byte-order mark; convert it to UTF-8 "
                "(e.g. iconv -f utf-16le -t utf-8)."
            )
        raise ValueError(f"{path}: binary data (NUL bytes), not a text file.")
    if not data.strip():
        raise ValueError(f"{path} is empty: no texts to read.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ValueError(
            f"{path}, line {line}: byte 0x{data[error.start]:02x} is not UTF-8; convert the file to UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8)."
        ) from None


def text_lines(text: str) -> list[str]:
    """The lines of ``text``, split at ``\\n`` only, each without its ``\\n`` or ``\\r\\n``.

    >>> text_lines("one\\r\\ntwo\\x0cstill two\\u2028and still\\n\\nfour\\n")
    ['one', 'two\\x0cstill two\\u2028and still', '', 'four']
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the file's final newline ends the last line; it does not start another
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_json_records(path: pathlib.Path, text: str | None = None) -> Records:
    """JSON records and the line each starts on (1 for every record of a whole-file JSON array)."""
    text = read_text_file(path) if text is None else text
    if path.suffix.lower() == ".json" and text.lstrip().startswith("{"):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # one object per line after all: read as JSON Lines below
        if isinstance(whole, dict) and "\n" in text.strip():
            raise ValueError(
                f"{path} holds one JSON object (keys {list(whole)[:5]}), not stories: expected a JSON list of "
                "objects, or one object per line (JSON Lines)."
            )
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
        if not isinstance(rows, list):
            raise ValueError(f"{path}: expected a JSON list of objects, got a {type(rows).__name__}.")
        lines = [1] * len(rows)
    else:
        rows, lines = [], []
        for line_number, line in enumerate(text_lines(text), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{line_number}: not valid JSON ({error.msg})") from None
            lines.append(line_number)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            where = f"line {lines[i]}" if len(set(lines)) == len(lines) else f"record {i}"
            raise ValueError(f"{path}, {where}: a JSON {type(row).__name__}, expected a JSON object")
    return Records(rows, lines)


class _NumberedLines:
    """The lines of a text, each with its ``\\n``, counting how many have been read (for ``csv``)."""

    def __init__(self, text: str) -> None:
        self._lines = _lines_with_ends(text)
        self.read = 0

    def __iter__(self) -> _NumberedLines:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.read += 1
        return line


def _lines_with_ends(text: str) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def read_csv_records(path: pathlib.Path, text: str | None = None) -> Records:
    """CSV records (as ``csv.DictReader`` builds them) and the line each record starts on.

    A quoted field may hold line breaks: the record over lines 2-4 starts at line 2. Blank
    lines are passed over.
    """
    text = read_text_file(path) if text is None else text
    lines = _NumberedLines(text)
    reader = csv.reader(lines)
    columns: list[str] | None = None
    rows: list[dict[str, Any]] = []
    starts: list[int] = []
    while True:
        before = lines.read
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            problem = (
                "a lone \\r line break in an unquoted field; quote the field, or end lines with \\n"
                if "new-line" in str(error)
                else f"not valid CSV ({error})"
            )
            raise ValueError(f"{path}:{lines.read}: {problem}") from None
        if not record:
            continue
        if columns is None:
            columns = record
            continue
        row: dict[str, Any] = dict(zip(columns, record, strict=False))
        if len(record) > len(columns):
            row[None] = record[len(columns) :]  # type: ignore[index]  # csv.DictReader's restkey
        for missing in columns[len(record) :]:
            row[missing] = None
        rows.append(row)
        starts.append(before + 1)
    return Records(rows, starts, columns or [])


def read_records(path: pathlib.Path) -> Records:
    """The rows of a ``.txt`` (``{"text": line}``), ``.jsonl``/``.json`` or ``.csv`` file, by its suffix."""
    suffix = path.suffix.lower()
    if suffix not in RECORD_SUFFIXES:
        raise ValueError(f"{path}: unsupported file type; use one of {', '.join(RECORD_SUFFIXES)}")
    text = read_text_file(path)
    if suffix == ".txt":
        lines = text_lines(text)
        return Records([{"text": line} for line in lines], list(range(1, len(lines) + 1)), ["text"])
    if suffix == ".csv":
        return read_csv_records(path, text)
    return read_json_records(path, text)
