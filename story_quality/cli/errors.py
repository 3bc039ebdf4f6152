"""The errors the commands share and how they are reported: one line on standard error, exit status 2."""

from __future__ import annotations

import sys


class UsageError(ValueError):
    """A bad file, row or option: printed as one line, exit status 2."""


class ProcessZeroError(UsageError):
    """Process 0's error, raised on the other processes too so that every one stops (printed once)."""


def report(command: str, error: BaseException | str) -> int:
    """Print ``COMMAND: error: MESSAGE`` on standard error; the exit status of a usage error (2)."""
    print(f"{command}: error: {error}", file=sys.stderr)
    return 2
