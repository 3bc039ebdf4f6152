"""UNION's text preparation in worker processes, while the model scores what is already prepared.

Normalising and tokenising a story runs in Python on one core; on a GPU the model scores faster
than one core prepares, so with ``num_workers`` (:data:`story_quality.union.options.UNION_OPTIONS`)
the stories are cut into chunks of :data:`~story_quality.union.encoding.ENCODE_CHUNK` texts and
each chunk is prepared by a worker process while the model scores the chunks before it. Each chunk
comes back in input order with exactly the ids the serial path gives (the same functions,
:func:`~story_quality.union.encoding.encode` and
:func:`~story_quality.union.windows.encode_windows`, run in the worker).

The workers are plain subprocesses (``python -c ...serve_stdio()``, this library first on their
path) talking over their standard input and output, not ``multiprocessing`` children: they never
re-import the caller's ``__main__`` (a script without a ``if __name__ == "__main__"`` guard works),
never fork a process that holds torch's or the tokenizer's threads (nor the scorer's paused
garbage collector), and may be started from a daemonic process or from each rank of ``torchrun``. A scorer keeps its workers between calls and stops them when
it is collected or the process exits.
"""

from __future__ import annotations

import concurrent.futures
import os
import pickle
import queue
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from story_quality.union.encoding import ENCODE_CHUNK, Encoded, encode
from story_quality.union.normalization import StoryNormalization

# What a worker answers: ("ok", Encoded) or ("error", the worker's traceback).
_OK, _ERROR = "ok", "error"


def prepare(
    tokenizer: Any, normalization: StoryNormalization, texts: Sequence[str], window: int, long_stories: str
) -> Encoded:
    """``texts`` as the model reads them: windows of whole sentences or the head, as the serial path
    prepares them (one chunk, no progress)."""
    if long_stories == "windows":
        from story_quality.union.windows import encode_windows

        return encode_windows(tokenizer, texts, window, normalization, chunk_size=max(1, len(texts)))
    return encode(tokenizer, texts, window, prepare=normalization, chunk_size=max(1, len(texts)))


class _Worker:
    """One worker process: the tokenizer and normalisation sent once, then one chunk at a time."""

    def __init__(self, tokenizer: Any, normalization: StoryNormalization) -> None:
        # This very library, first on the worker's path (before the working directory's).
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        # Ctrl-C reaches the whole process group: the caller stops its workers (it closes their input),
        # so a worker ignores SIGINT from its first statement on, and prints no traceback of its own.
        start = (
            "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            f"import sys; sys.path.insert(0, {package_root!r}); import {__name__}; {__name__}.serve_stdio()"
        )
        env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", start],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._send((tokenizer, normalization))

    def _send(self, message: Any) -> None:
        assert self.process.stdin is not None
        try:
            pickle.dump(message, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None

    def _died(self) -> RuntimeError:
        code = self.process.wait()
        return RuntimeError(
            f"a UNION text preparation worker stopped (exit code {code}); see its error above"
        )

    def prepare(self, texts: list[str], window: int, long_stories: str) -> Encoded:
        self._send((texts, window, long_stories))
        assert self.process.stdout is not None
        try:
            status, answer = pickle.load(self.process.stdout)
        except EOFError:
            raise self._died() from None
        if status == _ERROR:
            raise RuntimeError(f"a UNION text preparation worker failed:\n{answer}")
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()  # the worker ends at the end of its input
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class PreparationWorkers:
    """``count`` worker processes preparing chunks of stories for one tokenizer and normalisation."""

    def __init__(self, tokenizer: Any, normalization: StoryNormalization, count: int) -> None:
        if count < 1:
            raise ValueError(f"num_workers must be at least 1 to start workers, got {count}")
        self.count = count
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._setup = (tokenizer, normalization)
        self._threads = concurrent.futures.ThreadPoolExecutor(max_workers=count)
        # also run at exit (weakref.finalize's default)
        self._finalizer = weakref.finalize(self, _stop_all, self._workers, self._threads)

    def _take(self) -> _Worker:
        """An idle worker, started on first need (a pool that is never used starts none)."""
        with self._lock:
            if self._idle.empty() and len(self._workers) < self.count:
                worker = _Worker(*self._setup)
                self._workers.append(worker)
                return worker
        return self._idle.get()

    def _prepare(self, texts: list[str], window: int, long_stories: str) -> Encoded:
        worker = self._take()
        try:
            return worker.prepare(texts, window, long_stories)
        finally:
            self._idle.put(worker)

    def chunks(
        self, texts: Sequence[str], window: int, long_stories: str, chunk_size: int = ENCODE_CHUNK
    ) -> Iterator[tuple[int, int, Encoded]]:
        """``(start, count, encoded)`` of each chunk of ``chunk_size`` texts (``count`` of them from
        ``texts[start]`` on), in input order; every chunk is
        handed to the workers at once, so they prepare ahead of the caller."""
        starts = range(0, len(texts), chunk_size)
        futures = [
            self._threads.submit(self._prepare, list(texts[start : start + chunk_size]), window, long_stories)
            for start in starts
        ]
        try:
            for start, future in zip(starts, futures, strict=True):
                yield start, min(chunk_size, len(texts) - start), future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        """Stop the workers (a later call starts new ones)."""
        self._finalizer()


def _stop_all(workers: list[_Worker], threads: concurrent.futures.ThreadPoolExecutor) -> None:
    # Not waiting for the threads: this may run in one of them (a collection there); a thread still
    # talking to a worker gets its answer, or the end of its output once the worker stops.
    threads.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.stop()
    workers.clear()


def _serve(requests: BinaryIO, answers: BinaryIO, prepare_chunk: Callable[..., Encoded] = prepare) -> None:
    """A worker's loop: the setup, then chunks until its input ends, each answered in turn."""
    import traceback

    try:
        tokenizer, normalization = pickle.load(requests)
    except EOFError:
        return
    while True:
        try:
            texts, window, long_stories = pickle.load(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any] = (
                _OK,
                prepare_chunk(tokenizer, normalization, texts, window, long_stories),
            )
        except Exception:  # the caller raises it, with the worker's traceback
            answer = (_ERROR, traceback.format_exc())
        try:
            pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
        except (BrokenPipeError, OSError):  # the caller is gone (stopped or killed): nothing to answer
            return


def serve_stdio() -> None:
    """A worker process's main: chunks from standard input, answers on standard output; anything a
    library prints goes to standard error."""
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr
    _serve(sys.stdin.buffer, answers)
