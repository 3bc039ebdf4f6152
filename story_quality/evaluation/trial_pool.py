"""Independent trials (bootstrap resamples, permutation trials) spread over the CPU's cores.

A statistic's trials are drawn first, in one process, from its one seeded generator; only then
are they split into chunks and computed, each chunk by whichever process is free, and put back in
the order drawn. So the figures are the same, to the last bit, on one process or on eight: only
the wall time changes.

Worker processes are forked (Linux): they start in milliseconds with the parent's modules
loaded. Where forking is not safe (macOS, Windows), and for work too small to gain from more
processes, the chunks run in the calling process. Workers ignore Ctrl-C: the command that
started them stops them, and says so once.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

import numpy as np

Trial = TypeVar("Trial")
# The most processes one statistic starts, and the trials a chunk holds (the progress bar moves
# a chunk at a time).
MOST_PROCESSES = 8
CHUNK = 20
# Trials x items below which one process finishes before others would have started to help.
ONE_PROCESS_BELOW = 50_000


def processes_for(trials: int, items: int) -> int:
    """How many processes compute ``trials`` trials of ``items`` items each: every usable core
    (at most ``MOST_PROCESSES``) where forking is safe and the work is large enough, else one."""
    if not sys.platform.startswith("linux") or trials * items < ONE_PROCESS_BELOW:
        return 1
    return max(1, min(MOST_PROCESSES, len(os.sched_getaffinity(0))))


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_trials(
    work: Callable[[Sequence[Trial]], np.ndarray],
    trials: Sequence[Trial],
    items: int,
    processes: int | None = None,
    step: Callable[[], object] | None = None,
) -> np.ndarray:
    """``work`` on chunks of ``trials`` of ``items`` items each (each call returns one row per trial),
    the rows stacked in the order of ``trials``, on ``processes`` processes (by default
    :func:`processes_for`'s); ``step`` is called once a trial as chunks finish."""
    processes = processes_for(len(trials), items) if processes is None else processes
    chunks = [trials[start : start + CHUNK] for start in range(0, len(trials), CHUNK)]
    if processes <= 1 or len(chunks) <= 1:
        parts = []
        for chunk in chunks:
            parts.append(work(chunk))
            _advance(step, len(chunk))
        return np.concatenate(parts)
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(
        min(processes, len(chunks)), mp_context=context, initializer=_ignore_interrupts
    )
    try:
        futures: list[Future[np.ndarray]] = [pool.submit(work, chunk) for chunk in chunks]
        parts = []
        for future, chunk in zip(futures, chunks, strict=True):
            parts.append(future.result())
            _advance(step, len(chunk))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return np.concatenate(parts)


def _advance(step: Callable[[], object] | None, count: int) -> None:
    if step is not None:
        for _ in range(count):
            step()
