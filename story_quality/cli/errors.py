"""The errors the commands share and the one handler that reports them: one line on standard error, exit 2.

Every command of ``story-quality`` (and every training script) runs its work through
:func:`run_and_report`, so a refusal reads the same everywhere::

    import sys
    from story_quality.cli.errors import run_and_report

    sys.exit(run_and_report("train_union.py", lambda: main(sys.argv[1:])))

- a refusal (:class:`UsageError`, any ``ValueError``, ``TypeError`` or ``OSError``: a bad file,
  row or option, a path that is a loop of links, a folder that cannot be written) prints
  ``COMMAND: error: MESSAGE`` and returns 2, as argparse's own usage errors do, without a traceback;
- standard output closed by its reader (``story-quality compare --json | head -1``) ends with one
  line saying so and 141, the status of a Unix tool that SIGPIPE ended (128 + 13);
- Ctrl-C prints ``COMMAND: interrupted`` and returns 130 (128 + SIGINT), as a shell reports it;
  SIGTERM prints ``COMMAND: terminated`` and returns 143 (128 + SIGTERM), after the same clean-up
  (worker processes stopped, files closed) as any other exit.

Set ``STORY_QUALITY_TRACEBACK=1`` to get the traceback of a refusal as well (for a bug report).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

# What a command refuses with: a bad input, option or path. Anything else is a bug and keeps its traceback.
REFUSALS: tuple[type[BaseException], ...] = (ValueError, TypeError, OSError)
USAGE_STATUS = 2
BROKEN_PIPE_STATUS = 128 + 13  # as a process that SIGPIPE ended
INTERRUPTED_STATUS = 128 + 2  # as a process that SIGINT ended
TERMINATED_STATUS = 128 + 15  # as a process that SIGTERM ended
TRACEBACK_VARIABLE = "STORY_QUALITY_TRACEBACK"


class UsageError(ValueError):
    """A bad file, row or option: printed as one line, exit status 2."""


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread so that the command stops as on Ctrl-C."""


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within it, SIGTERM raises :class:`Terminated` in the main thread (elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Terminated

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class ProcessZeroError(UsageError):
    """Process 0's error, raised on the other processes too so that every one stops (printed once)."""


def refusal_message(error: BaseException | str) -> str:
    """The one line that says what is wrong: an ``OSError`` as ``PATH: what the system said``.

    >>> refusal_message(IsADirectoryError(21, "Is a directory", "out"))
    'out: Is a directory'
    >>> refusal_message(ValueError("--input a.csv:3: 3 fields, the header names 2"))
    '--input a.csv:3: 3 fields, the header names 2'
    """
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        names = [os.fsdecode(error.filename)]
        if error.filename2 is not None:
            names.append(os.fsdecode(error.filename2))
        return f"{' -> '.join(names)}: {error.strerror}"
    return str(error) or type(error).__name__


def report(command: str, error: BaseException | str) -> int:
    """Print ``COMMAND: error: MESSAGE`` on standard error; the exit status of a usage error (2)."""
    print(f"{command}: error: {refusal_message(error)}", file=sys.stderr, flush=True)
    return USAGE_STATUS


def _quiet_stdout() -> None:
    """Point standard output at the null device, so that Python's own flush at exit finds no broken pipe."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # no file descriptor behind sys.stdout (a test's capture)
        pass


def run_and_report(command: str, main_fn: Callable[[], int | None]) -> int:
    """Run ``main_fn`` and return its exit status (0 for None); every refusal becomes one line and 2.

    A :class:`ProcessZeroError` (a process other than 0 stopping with process 0's error) returns 2
    without printing, as process 0 prints it. Standard output is flushed before returning, so that a
    reader that closed it early is seen here and not as a traceback at exit.
    """
    try:
        with sigterm_raises():
            status = main_fn()
            sys.stdout.flush()
        return 0 if status is None else int(status)
    except BrokenPipeError:
        _quiet_stdout()
        print(
            f"{command}: standard output was closed by its reader; the rest of what it prints was not written",
            file=sys.stderr,
            flush=True,
        )
        return BROKEN_PIPE_STATUS
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED_STATUS
    except Terminated:
        print(f"{command}: terminated", file=sys.stderr, flush=True)
        return TERMINATED_STATUS
    except REFUSALS as error:
        if isinstance(error, ProcessZeroError):
            return USAGE_STATUS
        if os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        return report(command, error)
