"""Reading the text files users hand the project: one home for every reader.

``.txt`` is one text a line, ``.jsonl`` one JSON object a line, ``.json`` a JSON list of objects
(or JSON Lines), ``.csv`` a header and one record a row (a quoted field may span lines). Every
row comes back with the line it starts on, and every error names the file and line.

Strict, so that a messy file never gives a wrong number: a CSV record with more or fewer fields
than its header (an unquoted comma), a quote that is never closed or stands inside an unquoted
field, a header naming a column twice, and a JSON object naming a key twice are refused, never
read as a cut, merged or overwritten text.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (old Mac files) only: a form feed, U+2028 or U+2029
inside a story is part of that story, never a new row (``str.splitlines`` would split there, so
it is never used). A CSV file's records end at ``\\n`` or ``\\r\\n`` (a lone ``\\r`` is refused).
A file is UTF-8 (a byte-order mark is dropped) or UTF-16 with its byte-order mark; a binary
file, an empty one or a byte that is not UTF-8 is refused by name and line.
"""

from __future__ import annotations

import json
import pathlib
import re
from collections import Counter
from typing import Any, NamedTuple

# A line's end: Unix, Windows or old Mac (one end each, ``\\r\\n`` never two).
_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")
# Local record files the readers here take, by extension.
RECORD_SUFFIXES = (".txt", ".jsonl", ".json", ".csv")
# What each command reads, named once here: ``score`` one text a row (a .json file, one array, is
# not among its inputs), ``meta-evaluate`` a rating a row in named columns (no .txt).
SCORE_INPUT_SUFFIXES = tuple(suffix for suffix in RECORD_SUFFIXES if suffix != ".json")
RATING_SUFFIXES = tuple(suffix for suffix in RECORD_SUFFIXES if suffix != ".txt")
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
        line = len(_LINE_END_BYTES.findall(data, 0, error.start)) + 1
        raise ValueError(
            f"{path}, line {line}: byte 0x{data[error.start]:02x} is not UTF-8; convert the file to UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8)."
        ) from None


def text_lines(text: str) -> list[str]:
    """The lines of ``text``, split at ``\\n``, ``\\r\\n`` or ``\\r`` only, each without its line end.

    >>> text_lines("one\\r\\ntwo\\x0cstill two\\u2028and still\\n\\rfour\\rfive\\n")
    ['one', 'two\\x0cstill two\\u2028and still', '', 'four', 'five']
    """
    lines = _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()  # the file's final line end ends the last line; it does not start another
    return lines


class _DuplicateKey(ValueError):
    """A JSON object that names one key twice (``json`` would keep the last value silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's keys and values, refusing a key given twice."""
    row: dict[str, Any] = {}
    for key, value in pairs:
        if key in row:
            raise _DuplicateKey(key)
        row[key] = value
    return row


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _line_at(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _decode(path: pathlib.Path, text: str, position: int, line: int, first_line: int = 1) -> tuple[Any, int]:
    """The JSON value at ``position`` of ``text`` and where it ends, or an error naming the file and line
    (``line`` is the line of ``position``, ``first_line`` the file's line of ``text``'s start)."""
    try:
        return _DECODER.raw_decode(text, position)
    except _DuplicateKey as error:
        raise ValueError(
            f"{path}:{line}: the key {error.args[0]!r} appears twice in one object; which value is meant "
            "cannot be told (json would keep the last one): keep one"
        ) from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}:{first_line + error.lineno - 1}: not valid JSON ({error.msg})") from None


def _json_array(path: pathlib.Path, text: str) -> tuple[list[Any], list[int]]:
    """The elements of a JSON array file and the line each starts on."""
    rows: list[Any] = []
    lines: list[int] = []
    position = _JSON_SPACE.match(text, 0).end() + 1  # after the opening [
    while True:
        position = _JSON_SPACE.match(text, position).end()
        if not rows and text.startswith("]", position):
            position += 1
            break
        line = _line_at(text, position)
        row, position = _decode(path, text, position, line)
        rows.append(row)
        lines.append(line)
        position = _JSON_SPACE.match(text, position).end()
        if text.startswith(",", position):
            position += 1
        elif text.startswith("]", position):
            position += 1
            break
        else:
            found = "the end of the file" if position >= len(text) else repr(text[position])
            raise ValueError(
                f"{path}:{_line_at(text, position)}: not valid JSON (expected , or ] but found {found})"
            )
    position = _JSON_SPACE.match(text, position).end()
    if position < len(text):
        raise ValueError(f"{path}:{_line_at(text, position)}: not valid JSON (more after the closing ])")
    return rows, lines


def read_json_records(path: pathlib.Path, text: str | None = None) -> Records:
    """JSON records and the line each starts on; an object naming a key twice is refused by line."""
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
        rows, lines = _json_array(path, text)
    else:
        rows, lines = [], []
        for line_number, line in enumerate(text_lines(text), 1):
            if not line.strip():
                continue
            row, end = _decode(path, line, _JSON_SPACE.match(line).end(), line_number, line_number)
            if line[end:].strip():
                raise ValueError(
                    f"{path}:{line_number}: not valid JSON (more after the object's end; JSON Lines holds one "
                    "object a line)"
                )
            rows.append(row)
            lines.append(line_number)
    for row, line in zip(rows, lines, strict=True):
        if not isinstance(row, dict):
            raise ValueError(f"{path}, line {line}: a JSON {type(row).__name__}, expected a JSON object")
    return Records(rows, lines)


# One CSV field: quoted (a doubled quote inside stands for one; it may span lines), or unquoted (no
# comma, quote or line break).
_CSV_FIELD = re.compile(r'"([^"]*(?:""[^"]*)*)"|([^,"\r\n]*)')
QUOTE_HINT = 'a field holding a comma, a quote or a line break is written in double quotes, a quote inside it doubled: "He said ""hi"", then left."'


def _csv_record(path: pathlib.Path, text: str, position: int, line: int) -> tuple[list[str], int]:
    """The fields of the record starting at ``position`` (on ``line``), and where the next record starts.

    RFC 4180, strictly: a quote may only open a field and close it; a quote inside an unquoted
    field, text after a closing quote, a quote never closed and a lone ``\\r`` are refused, naming
    the line the field starts on, so that no field is silently cut or merged with the next.
    """
    fields: list[str] = []
    record_start = position
    while True:
        start = position
        match = _CSV_FIELD.match(text, position)
        position = match.end()
        quoted = match.group(1) is not None
        fields.append(match.group(1).replace('""', '"') if quoted else match.group(2))
        following = text[position : position + 2]
        if following.startswith(","):
            position += 1
            continue
        if position >= len(text) or following.startswith("\n") or following == "\r\n":
            return fields, position + (2 if following == "\r\n" else min(1, len(following)))
        field_line = line + text.count("\n", record_start, start)
        raise ValueError(f"{path}:{field_line}: {_csv_problem(text, start, position, len(fields))}")


def _csv_problem(text: str, start: int, end: int, field: int) -> str:
    """What is wrong where field number ``field`` (from ``start``) stopped at ``end``, before a character
    that neither ends a field nor a record."""
    if text[end] == "\r":
        return "a lone \\r line break in an unquoted field; quote the field, or end lines with \\n"
    if end == start:  # the field opens a quote that the rest of the file never closes
        return f"field {field} opens a quote that is never closed (the rest of the file would be one text); {QUOTE_HINT}"
    if text[start] != '"':
        return f"field {field} holds a quote but is not in quotes; {QUOTE_HINT}"
    spanned = text.count("\n", start, end)
    closed = (
        f" (its quote closes {spanned} line{'s' if spanned > 1 else ''} further down: a quote left open?)"
        if spanned
        else ""
    )
    return f"field {field} goes on after its closing quote{closed}; {QUOTE_HINT}"


def read_csv_records(path: pathlib.Path, text: str | None = None) -> Records:
    """CSV records (one dict each, by the header's names) and the line each record starts on.

    A quoted field may hold line breaks: the record over lines 2-4 starts at line 2. Blank
    lines are passed over. Strict, so that no text is cut at a comma or merged with the next
    row: a header naming a column twice, a record with more or fewer fields than the header and
    a stray or unclosed quote (:func:`_csv_record`) are refused, naming the file and line.
    """
    text = read_text_file(path) if text is None else text
    columns: list[str] | None = None
    rows: list[dict[str, Any]] = []
    starts: list[int] = []
    position, line = 0, 1
    while position < len(text):
        record, end = _csv_record(path, text, position, line)
        record_line, line = line, line + text.count("\n", position, end)
        position = end
        if record == [""]:
            continue  # a blank line
        if columns is None:
            twice = [name for name, count in Counter(record).items() if count > 1]
            if twice:
                raise ValueError(
                    f"{path}:{record_line}: the header names the column {twice[0]!r} twice; which one holds "
                    "the text cannot be told: give each column its own name"
                )
            columns = record
            continue
        if len(record) != len(columns):
            problem = (
                "a comma inside a text needs the field in double quotes"
                if len(record) > len(columns)
                else "every record has one field per column (an empty one is written as nothing between commas)"
            )
            raise ValueError(
                f"{path}:{record_line}: {len(record)} field{'s' if len(record) != 1 else ''}, but the header names "
                f"{len(columns)} ({', '.join(map(repr, columns))}); {problem}"
            )
        rows.append(dict(zip(columns, record, strict=True)))
        starts.append(record_line)
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
