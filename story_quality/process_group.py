"""Leaving a multi-process launch's process group cleanly, on every process.

Left open, a CPU (gloo) group's threads can still run at interpreter exit and abort a process
that finished its work ("terminate called without an active exception", exit -6), so a torchrun
launch fails after a complete result. The scoring command and the training scripts close it here.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any


def process_group_open() -> bool:
    import torch.distributed

    return torch.distributed.is_available() and torch.distributed.is_initialized()


# How long a process waits at teardown for the others to arrive before it leaves anyway.
TEARDOWN_SECONDS = 120


def leave_process_group() -> None:
    """Close the process group the run formed, on every process, so no gloo thread outlives the
    interpreter.

    Left open, a CPU group's threads can still run at exit and abort a process that did all its
    work ("terminate called without an active exception"), failing the launch. The processes first
    meet at a barrier (bounded by :data:`TEARDOWN_SECONDS`), so none tears its side down while
    another still talks to it (process 0 hosts the store the others reach); output is flushed
    first. A failing barrier or teardown changes no exit status: the output is already complete
    or already refused. A group the caller had opened before is left to it.
    """
    import torch.distributed as dist

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        meet_before_leaving(dist)
    with contextlib.suppress(Exception):
        dist.destroy_process_group()


def meet_before_leaving(dist: Any) -> None:
    """Every process at one barrier (a monitored one on gloo, which gives up after a timeout)."""
    import datetime

    if dist.get_world_size() < 2:
        return
    if dist.get_backend() == "gloo":
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=TEARDOWN_SECONDS))
    else:
        dist.barrier()
