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
* An existing output is continued only as :mod:`story_quality.score_file.resume` says.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
from collections.abc import Iterable, Iterator

from story_quality.score_file.rows import ScoreFileError

LOCK_SUFFIX = ".lock"


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
            raise ScoreFileError(
                f"{option} {output} is the input {source}; writing it would destroy the input. "
                f"Name another {option}."
            )


def refuse_unusable_name(output: pathlib.Path, option: str = "--output", kind: str = "file") -> None:
    """Refuse ``-`` (standard output, which a command that reads its output back, locks it or writes a
    folder cannot use), a loop of symbolic links, and a link to nothing (writing through it would
    create a file elsewhere, under another name)."""
    if str(output) == "-":
        raise ScoreFileError(
            f"{option} -: this command writes a {kind}, never to standard output; name a {kind}."
        )
    if not output.is_symlink():
        return
    try:
        os.stat(output)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ScoreFileError(f"{option} {output} is a loop of symbolic links; name a {kind}.") from None
        raise ScoreFileError(
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
        raise ScoreFileError(f"{option} {output}: the folder {folder} does not exist; create it first.")
    if not folder.is_dir():
        raise ScoreFileError(f"{option} {output}: {folder} is not a folder.")
    if not output.exists() and not os.access(folder, os.W_OK):
        raise ScoreFileError(
            f"{option} {output}: the folder {folder} is read-only; name a file in another folder."
        )
    if output.is_dir():
        raise ScoreFileError(f"{option} {output} is a folder; name a file.")
    if output.exists() and not output.is_file():
        raise ScoreFileError(
            f"{option} {output} is not a regular file (a device, pipe or socket such as /dev/stdout): "
            f"the command reads its output back to resume it. Name a file."
        )
    if output.exists() and not os.access(output, os.W_OK):
        raise ScoreFileError(f"{option} {output} is read-only; name another {option}.")


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
            raise ScoreFileError(
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


def _busy(lock: pathlib.Path, output: pathlib.Path, option: str) -> ScoreFileError:
    return ScoreFileError(
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
        raise ScoreFileError(f"{option} {output}: cannot be opened ({error.strerror or error}).") from None
    if not _flock(descriptor):
        os.close(descriptor)
        raise ScoreFileError(
            f"{option} {output} is being written by another run under another name (a link to the same "
            f"file; this run holds {lock}); wait for that run to finish, or name another {option}."
        )
    return descriptor
