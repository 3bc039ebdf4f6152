"""Python's cyclic garbage collector paused while a scoring call makes its many short-lived objects.

A scoring call makes hundreds of thousands of small objects (token id lists, sentences, scores)
that die by reference counting. Their number alone sets the cyclic collector off, and its passes
over the oldest generation walk every object of the process (torch's, transformers' and the
models': about 400,000): in one GRUEN call on 200 stories in a fresh process, two such passes and
their younger kin took 0.9 s of 54 s (``benchmarks/log/2026-11-29-text-path-and-fp32-choice.md``).
The collector is off for the call and set back as it was after it (left off where the caller had
turned it off); the few reference cycles a call makes wait for the next pass after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the context, as it was before it after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
