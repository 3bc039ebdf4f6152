"""One row of a score file: what it holds and how it is sealed.

Each input row of ``story-quality score`` becomes one JSON line: its ``index`` (first), ``line``
and ``text_hash`` (:func:`row_identity`), the first row also the ``signature`` and the number of
input rows (:data:`INPUT_ROWS`), then the metric's scores (or ``skipped`` with the reason), and
last a ``row_hash`` over the rest (:func:`seal`), so that a row edited or cut by hand is found.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ROW_HASH = "row_hash"
TEXT_HASH = "text_hash"
# The first row records how many rows its input has: a reader tells a finished output from a cut one.
INPUT_ROWS = "input_rows"
HASH_DIGITS = 16
# How every row this module seals starts (``seal`` puts ``index`` first): a cut-short last line
# that starts otherwise was not written by the command.
ROW_START = b'{"index": '


class ScoreFileError(ValueError):
    """A score file (or the ratings or report beside it) that must not be written, resumed, read or
    compared: named (file and line), with what to do. ``compare`` and ``meta-evaluate`` refuse with it."""


def text_hash(text: Any) -> str:
    """A short sha256 of an input row's text (of its JSON form when it is not a string)."""
    data = text if isinstance(text, str) else json.dumps(text, sort_keys=True, default=repr)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]


def _content_hash(record: dict[str, Any]) -> str:
    content = {key: value for key, value in record.items() if key != ROW_HASH}
    canonical = json.dumps(content, sort_keys=True, allow_nan=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def row_intact(record: dict[str, Any]) -> bool:
    """Whether a sealed row's content still matches its ``row_hash`` (False for a NaN typed in by hand)."""
    try:
        return record.get(ROW_HASH) == _content_hash(record)
    except ValueError:
        return False


def seal(record: dict[str, Any]) -> str:
    """``record`` as one output line (with its ``row_hash``); a NaN or infinity is refused (not JSON)."""
    if next(iter(record), None) != "index":
        raise ValueError("a sealed row starts with its 'index'")
    return json.dumps({**record, ROW_HASH: _content_hash(record)}, allow_nan=False) + "\n"


def row_identity(index: int, line: int, text: Any) -> dict[str, Any]:
    """What a score row says of its input row: index, line and a hash of its text."""
    return {"index": index, "line": line, TEXT_HASH: text_hash(text)}


# Fields that say which row a score belongs to, never a score themselves.
IDENTITY_FIELDS = ("index", "line", TEXT_HASH, ROW_HASH, "signature", "skipped", INPUT_ROWS)
