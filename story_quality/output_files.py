"""The rule for a file a command writes: it never changes a file it did not write.

* The output is never one of the inputs: the same path, or the same file through a symbolic or
  hard link (resolved paths and ``(device, inode)`` are compared).
* Its folder must exist and take new files, checked before any work.
* It is a regular file (or not there yet): a device, pipe or socket (``/dev/stdout``) is refused,
  since a resume must read back what it wrote.
* One run at a time, whatever path names the file: :func:`claim_output` holds an exclusive lock
  on ``NAME.lock`` beside the real file (symbolic links and relative names resolved) and on the
  output file itself (so a hard link is held too) while the run lasts (the operating system
  releases them when the process dies, so a killed run never blocks the next; the lock file is
  removed at the end). A second run is refused with the lock's name and the process that holds
  it; :func:`being_written` tells a reader (``compare``) the same.
* An existing output is continued only when every row in it is one this module sealed
  (:func:`seal`: a hash of the row's own content, so a row edited or cut by hand is found) and
  each row's ``text_hash`` matches its input text (a different input of the same length is
  refused, naming the first row that differs). Only a last line cut short by a kill is dropped,
  and only when it is an unfinished start of the very row this run would write there (its
  index, line and text hash; never a complete JSON value), after every row before it was found
  to be this input's; any other file (notes, settings, a one-line JSON file without a final
  newline, whatever its first characters) is refused, never truncated. An empty file is written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import pathlib
from collections.abc import Iterable, Iterator
from typing import Any

LOCK_SUFFIX = ".lock"
ROW_HASH = "row_hash"
TEXT_HASH = "text_hash"
# The first row records how many rows its input has: a reader tells a finished output from a cut one.
INPUT_ROWS = "input_rows"
HASH_DIGITS = 16
# How every row this module seals starts (``seal`` puts ``index`` first): a cut-short last line
# that starts otherwise was not written by the command.
ROW_START = b'{"index": '


class OutputError(ValueError):
    """An output that must not be written: named, with what to do instead."""


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


def same_file(first: pathlib.Path, second: pathlib.Path) -> bool:
    """Whether two paths name one file: the same resolved path, or one file through a link (a loop of
    links resolves as far as it goes, as ``os.path.realpath`` does, rather than raising)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False  # one of them does not exist yet


def refuse_inputs(output: pathlib.Path, inputs: Iterable[pathlib.Path], option: str = "--output") -> None:
    """Refuse an output that is one of the inputs (by path or link)."""
    for source in inputs:
        if same_file(output, source):
            raise OutputError(
                f"{option} {output} is the input {source}; writing it would destroy the input. "
                f"Name another {option}."
            )


def refuse_unusable_name(output: pathlib.Path, option: str = "--output", kind: str = "file") -> None:
    """Refuse ``-`` (standard output, which a command that reads its output back, locks it or writes a
    folder cannot use), a loop of symbolic links, and a link to nothing (writing through it would
    create a file elsewhere, under another name)."""
    if str(output) == "-":
        raise OutputError(
            f"{option} -: this command writes a {kind}, never to standard output; name a {kind}."
        )
    if not output.is_symlink():
        return
    try:
        os.stat(output)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OutputError(f"{option} {output} is a loop of symbolic links; name a {kind}.") from None
        raise OutputError(
            f"{option} {output} is a symbolic link to {os.readlink(output)}, which does not exist; name the "
            f"{kind} itself."
        ) from None


def check_folder(output: pathlib.Path, option: str = "--output") -> None:
    """Refuse an output whose folder is missing, not a folder or read-only, or that is a folder, a
    device, a pipe or a socket (``/dev/stdout``: never read back, and no lock beside it), ``-``, a
    loop of links or a link to nothing (:func:`refuse_unusable_name`)."""
    refuse_unusable_name(output, option)
    folder = output.absolute().parent
    if not folder.exists():
        raise OutputError(f"{option} {output}: the folder {folder} does not exist; create it first.")
    if not folder.is_dir():
        raise OutputError(f"{option} {output}: {folder} is not a folder.")
    if not output.exists() and not os.access(folder, os.W_OK):
        raise OutputError(
            f"{option} {output}: the folder {folder} is read-only; name a file in another folder."
        )
    if output.is_dir():
        raise OutputError(f"{option} {output} is a folder; name a file.")
    if output.exists() and not output.is_file():
        raise OutputError(
            f"{option} {output} is not a regular file (a device, pipe or socket such as /dev/stdout): "
            f"the command reads its output back to resume it. Name a file."
        )
    if output.exists() and not os.access(output, os.W_OK):
        raise OutputError(f"{option} {output} is read-only; name another {option}.")


def lock_path(output: pathlib.Path) -> pathlib.Path:
    """``NAME.lock`` beside the real file: links and relative names resolved, so one file has one lock."""
    real = pathlib.Path(os.path.realpath(output))
    return real.with_name(real.name + LOCK_SUFFIX)


def _flock(descriptor: int, exclusive: bool = True) -> bool:
    """Take a non-blocking ``flock`` on ``descriptor``: False when another process holds it."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows)
        return True
    try:
        fcntl.flock(descriptor, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def being_written(output: pathlib.Path) -> str | None:
    """Who is writing ``output`` now (a run holding its lock file or the file itself), or None."""
    lock = lock_path(output)
    for path, exclusive in ((lock, True), (pathlib.Path(output), False)):
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            if not _flock(descriptor, exclusive):
                return _holder(lock) if path == lock else "another process"
        finally:
            os.close(descriptor)
    return None


def _holder(lock: pathlib.Path) -> str:
    try:
        pid = lock.read_text(encoding="utf-8").strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"


def _open_lock(lock: pathlib.Path, output: pathlib.Path, option: str) -> int:
    """An open descriptor on ``lock``, held exclusively by this process."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the lock file's creation is the claim
        fcntl = None
    while True:
        flags = os.O_RDWR | os.O_CREAT | (0 if fcntl else os.O_EXCL)
        try:
            descriptor = os.open(lock, flags, 0o644)
        except FileExistsError:
            raise _busy(lock, output, option) from None
        except OSError as error:
            raise OutputError(
                f"{option} {output}: cannot write in {lock.parent} ({error.strerror or error})."
            ) from None
        if fcntl is None:
            return descriptor
        try:
            held = _flock(descriptor)
        except OSError:
            os.close(descriptor)
            raise
        if not held:
            os.close(descriptor)
            raise _busy(lock, output, option)
        # The holder before us may have removed the file between our open and our lock: retry then.
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.stat(lock), os.fstat(descriptor)):
                return descriptor
        os.close(descriptor)


def _busy(lock: pathlib.Path, output: pathlib.Path, option: str) -> OutputError:
    return OutputError(
        f"{option} {output} is being written by {_holder(lock)} (it holds {lock}); wait for that run to "
        f"finish, or name another {option}."
    )


@contextlib.contextmanager
def claim_output(
    output: pathlib.Path, inputs: Iterable[pathlib.Path] = (), option: str = "--output"
) -> Iterator[pathlib.Path]:
    """Check ``output`` may be written and hold it for this run; an empty file it created is removed after."""
    output = pathlib.Path(output)
    check_folder(output, option)
    refuse_inputs(output, inputs, option)
    lock = lock_path(output)
    descriptor = _open_lock(lock, output, option)
    existed = output.exists()
    held = None
    try:
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        held = _hold_file(output, lock, option)
        yield output
    finally:
        if held is not None:
            os.close(held)
        if not existed and output.exists() and output.stat().st_size == 0:
            output.unlink()
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()  # before the lock is released: a run waiting on this file retries
        os.close(descriptor)


def _hold_file(output: pathlib.Path, lock: pathlib.Path, option: str) -> int:
    """An exclusive lock on the output file itself (created empty when new), so that a run through
    a hard link, whose lock file has another name, is kept off too. Opening changes no byte."""
    try:
        descriptor = os.open(output, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise OutputError(f"{option} {output}: cannot be opened ({error.strerror or error}).") from None
    if not _flock(descriptor):
        os.close(descriptor)
        raise OutputError(
            f"{option} {output} is being written by another run under another name (a link to the same "
            f"file; this run holds {lock}); wait for that run to finish, or name another {option}."
        )
    return descriptor


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
            raise OutputError(
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
        raise OutputError(
            f"{option} {output}, line {number}: not a row this command writes; the file is not its output "
            f"(or was written by an older version). Name another {option}."
        )
    if not row_intact(record):
        raise OutputError(
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
        raise OutputError(
            f"{output_option} {output} was started for an input of {recorded} rows but {input_option} {source} "
            f"has {len(expected)}: the input changed, or it is another input. Rerun with the input it was "
            f"started for to complete it, or name another {output_option}."
        )
    if len(rows) > len(expected):
        raise OutputError(
            f"{output_option} {output} holds {len(rows)} rows but {input_option} {source} has "
            f"{len(expected)}: it is the output of another input. Name another {output_option}."
        )
    for position, (row, identity) in enumerate(zip(rows, expected, strict=False)):
        if "index" in identity and row.get("index") != identity["index"]:
            raise OutputError(
                f"{output_option} {output}, line {position + 1} holds the row of input row "
                f"{_one_based(row.get('index'))} where input row {identity['index'] + 1} belongs: a row was "
                f"deleted or moved. Delete it and every row after it to rescore them, or name another "
                f"{output_option}."
            )
        differing = [key for key, value in identity.items() if row.get(key) != value]
        if differing:
            raise OutputError(
                f"{output_option} {output}, row {position + 1} is not the output of row {position + 1} of "
                f"{input_option} {source} (its {' and '.join(differing)} differ): it is the output of another "
                f"input, or the input changed. Name another {output_option}."
            )
