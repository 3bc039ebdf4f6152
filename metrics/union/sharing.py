"""Sharing one metric instance: between threads (one compute at a time) and processes (pickled as a reload).

``evaluate`` keeps each instance's inputs in its own cache file and writer, so two threads
computing at once on one instance corrupt each other's state; here they take turns instead.
A loaded model and ``evaluate``'s locks cannot be pickled, so an instance pickles as the call
that loads it again (:func:`reload_metric`): ``datasets.map(num_proc=N)`` then gives each
worker process its own copy. A metric folder must stand alone, so ``metrics/union`` and
``metrics/gruen`` each carry this file; a test keeps the copies equal.
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
        lock = self.__dict__.setdefault("_compute_lock", threading.Lock())  # atomic: one lock per instance
        with lock:
            return super().compute(*args, **kwargs)

    def __reduce__(self):
        return (reload_metric, (inspect.getfile(type(self)), self.config_name))


def reload_metric(script: str, config_name: str) -> evaluate.EvaluationModule:
    """Unpickling an instance: load it again, in memory (workers reloading at once must not queue
    on one cache file's lock). In a forked child torch runs single-threaded: its OpenMP thread
    pool does not survive ``fork``, and the first parallel operation would hang."""
    if os.getpid() != _IMPORTED_IN_PROCESS:
        torch.set_num_threads(1)
    return evaluate.load(script, config_name, keep_in_memory=True)


_IMPORTED_IN_PROCESS = os.getpid()
