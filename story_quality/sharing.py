"""Sharing one metric instance: between threads (one call at a time) and processes (pickled as a reload).

``evaluate`` keeps each instance's inputs in its own cache file and writer, so two threads
computing or adding at once on one instance corrupt each other's state (two ``add`` calls that
both find no writer each open one, and the first one's texts are lost); here ``compute``,
``add`` and ``add_batch`` take turns instead, on one re-entrant lock (``evaluate``'s ``compute``
calls ``add_batch`` itself).
A loaded model and ``evaluate``'s locks cannot be pickled, so an instance pickles as the call
that loads it again (:func:`reload_metric`), which gives each spawned worker its own copy. A
forked worker (``datasets.map(num_proc=N)`` on Linux) inherits the parent's instance and runs
torch on one thread (:func:`_one_thread_after_fork`). Both metrics use it.
"""

from __future__ import annotations

import inspect
import os
import threading

import evaluate
import torch


class SharedInstance:
    """Mixin for an ``evaluate.Metric`` subclass (put it first among the bases)."""

    def compute(self, *args, **kwargs):
        """``evaluate``'s compute, one thread at a time."""
        with self.taking_turns():
            return super().compute(*args, **kwargs)

    def add_batch(self, *args, **kwargs):
        """``evaluate``'s add_batch, one thread at a time."""
        with self.taking_turns():
            return super().add_batch(*args, **kwargs)

    def add(self, *args, **kwargs):
        """``evaluate``'s add, one thread at a time."""
        with self.taking_turns():
            return super().add(*args, **kwargs)

    def taking_turns(self) -> threading.RLock:
        """The instance's lock (re-entrant): hold it around any use of its model, writer or cache."""
        return self.__dict__.setdefault("_compute_lock", threading.RLock())  # atomic: one lock per instance

    def __reduce__(self):
        return (reload_metric, (inspect.getfile(type(self)), self.config_name))


def reload_metric(script: str, config_name: str) -> evaluate.EvaluationModule:
    """Unpickling an instance: load it again, in memory (workers reloading at once must not queue
    on one cache file's lock)."""
    return evaluate.load(script, config_name, keep_in_memory=True)


def _one_thread_after_fork() -> None:
    """torch's OpenMP thread pool does not survive ``fork``: in a forked child (a ``datasets.map``
    worker) the first parallel operation would wait forever for the parent's threads. One thread
    needs no pool; PyTorch's own DataLoader workers run the same way."""
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_one_thread_after_fork)
