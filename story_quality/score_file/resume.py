"""Resuming a score file: the rows an earlier run wrote, checked against this run's input.

An existing output is continued only when every row in it is sealed (:func:`~story_quality.score_file.rows.seal`)
and each row's identity matches its input row; only a last line cut short by a kill is dropped,
and only when it is an unfinished start of the very row this run would write there.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from story_quality.score_file.rows import INPUT_ROWS, ROW_HASH, ROW_START, ScoreFileError, row_intact


def read_sealed_rows(
    output: pathlib.Path,
    option: str = "--output",
    expected: list[dict[str, Any]] | None = None,
    source: pathlib.Path | None = None,
) -> list[dict[str, Any]]:
    """The rows of an existing output, each checked against its seal; a last line cut short is dropped.

    With ``expected`` (each input row's identity, see :func:`refuse_other_input`) the rows are
    checked against the input of ``source`` first, and a cut-short last line is dropped only
    when it is the unfinished start of the very row this run would write there. Refuses (never
    changes) a file this module did not seal. A file that does not exist or is empty has no rows.
    """
    if not output.exists():
        return []
    data = output.read_bytes()
    keep = data.rfind(b"\n") + 1
    rows = [
        _checked_row(line, number, output, option)
        for number, line in enumerate(data[:keep].split(b"\n")[:-1], 1)
    ]
    if expected is not None:
        refuse_other_input(rows, expected, output, source or pathlib.Path("the input"), (option, "--input"))
    tail = data[keep:]
    if tail:
        if not _cut_short_row(tail, rows, expected):
            raise ScoreFileError(
                f"{option} {output} ends with a line this command did not write ({tail[:40]!r}); it is "
                f"not an output of this command. Name another {option}."
            )
        with output.open("r+b") as handle:
            handle.truncate(keep)
    return rows


def _row_opening(identity: dict[str, Any]) -> bytes:
    """How the sealed row of an input row with ``identity`` (index first) starts, up to its next field."""
    return json.dumps(identity).encode("utf-8")[:-1]


def _cut_short_row(tail: bytes, rows: list[dict[str, Any]], expected: list[dict[str, Any]] | None) -> bool:
    """Whether ``tail`` (a last line without its newline) is what a run killed while writing leaves.

    A complete JSON value never is (a kill leaves a row unfinished). With ``expected`` the tail
    must be an unfinished start of the row due next: its index, line and text hash, byte for
    byte. Without it, after sealed rows any start of a row; in a file without them at least the
    opening every row has.
    """
    try:
        json.loads(tail.decode("utf-8"))
        return False
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    if expected is not None:
        if len(rows) >= len(expected):
            return False
        opening = _row_opening(expected[len(rows)])
        started = bool(rows) or tail.startswith(ROW_START)  # a lone "{" in a file of no rows is no row
        return started and (opening.startswith(tail) or tail.startswith(opening + b", "))
    return tail.startswith(ROW_START[: len(tail)]) if rows else tail.startswith(ROW_START)


def _checked_row(line: bytes, number: int, output: pathlib.Path, option: str) -> dict[str, Any]:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        record = None
    if not isinstance(record, dict) or ROW_HASH not in record:
        raise ScoreFileError(
            f"{option} {output}, line {number}: not a row this command writes; the file is not its output "
            f"(or was written by an older version). Name another {option}."
        )
    if not row_intact(record):
        raise ScoreFileError(
            f"{option} {output}, line {number}: this row was changed after it was written (its "
            f"{ROW_HASH} does not match). Restore the row, delete it and every row after it to rescore "
            f"them, or name another {option}."
        )
    return record


def _one_based(index: Any) -> Any:
    return index + 1 if isinstance(index, int) else index


def refuse_other_input(
    rows: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    output: pathlib.Path,
    source: pathlib.Path,
    options: tuple[str, str] = ("--output", "--input"),
) -> None:
    """Refuse resuming ``rows`` unless each carries what ``expected`` (one dict per input row) says.

    ``expected`` holds each input row's identity, e.g. its index, line and ``text_hash``: a
    different input of the same length is refused, naming the first row that differs, and so is
    an input whose number of rows is not the one the first row records (:data:`INPUT_ROWS`): a
    shorter input resumed would end the file early, which ``compare`` would call unfinished.
    """
    output_option, input_option = options
    recorded = rows[0].get(INPUT_ROWS) if rows else None
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded != len(expected):
        raise ScoreFileError(
            f"{output_option} {output} was started for an input of {recorded} rows but {input_option} {source} "
            f"has {len(expected)}: the input changed, or it is another input. Rerun with the input it was "
            f"started for to complete it, or name another {output_option}."
        )
    if len(rows) > len(expected):
        raise ScoreFileError(
            f"{output_option} {output} holds {len(rows)} rows but {input_option} {source} has "
            f"{len(expected)}: it is the output of another input. Name another {output_option}."
        )
    for position, (row, identity) in enumerate(zip(rows, expected, strict=False)):
        if "index" in identity and row.get("index") != identity["index"]:
            raise ScoreFileError(
                f"{output_option} {output}, line {position + 1} holds the row of input row "
                f"{_one_based(row.get('index'))} where input row {identity['index'] + 1} belongs: a row was "
                f"deleted or moved. Delete it and every row after it to rescore them, or name another "
                f"{output_option}."
            )
        differing = [key for key, value in identity.items() if row.get(key) != value]
        if differing:
            raise ScoreFileError(
                f"{output_option} {output}, row {position + 1} is not the output of row {position + 1} of "
                f"{input_option} {source} (its {' and '.join(differing)} differ): it is the output of another "
                f"input, or the input changed. Name another {output_option}."
            )
