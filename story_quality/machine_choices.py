"""What processes measure about this machine, kept on disk so that later processes read it instead
of measuring again (or add to it).

A measurement is kept under a name (one JSON file per name) and a key that says what it was
measured for (the CPU, the torch version, the thread count...): a later process asking with
another key measures anew. What a kept value means is its user's (a choice, timings). The folder is ``$STORY_QUALITY_CACHE``, else ``$XDG_CACHE_HOME/story_quality``,
else ``~/.cache/story_quality``; delete a file there to measure again. A folder that cannot be
read or written costs nothing but the measurement: the choice is then made in each process.
:func:`cpu_name` is this machine's CPU by name, the first fact a key holds.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import tempfile
from typing import Any

CACHE_VARIABLE = "STORY_QUALITY_CACHE"


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what ``platform`` says)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine() or "unknown CPU"


def cache_folder() -> pathlib.Path:
    """Where kept choices live (see the module's description)."""
    if os.environ.get(CACHE_VARIABLE):
        return pathlib.Path(os.environ[CACHE_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "story_quality"


def _path(name: str) -> pathlib.Path:
    return cache_folder() / f"{name}.json"


def _read(name: str) -> dict[str, Any]:
    try:
        kept = json.loads(_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, unreadable or damaged: measured anew and written over
    return kept if isinstance(kept, dict) else {}


def kept_choice(name: str, key: str) -> Any:
    """The value kept under ``name`` for ``key`` (as JSON reads it back), or None when none is (or
    it cannot be read)."""
    return _read(name).get(key)


def keep_choice(name: str, key: str, choice: Any) -> None:
    """Keep ``choice`` (a JSON value) under ``name`` for ``key`` beside the file's other keys. The
    file is replaced whole (written aside, then renamed), so a reader never sees half of it; a
    failure is ignored."""
    try:
        folder = cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        kept = {**_read(name), key: choice}
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(kept, file, indent=1, sort_keys=True)
            os.replace(temporary, _path(name))
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass  # a read-only home or a full disk: the choice stays this process's
