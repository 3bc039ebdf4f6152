"""Output folders that are never lost: refuse to reuse one by accident, and publish a new one whole.

A training run or a built corpus can take hours; writing it over an earlier one because a
folder name was reused costs those hours. A build interrupted half-way must not leave a folder
that later loads as a complete corpus, so builds are written beside the target and moved into
place in one rename.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field

# Files a finished or interrupted run leaves in its output folder (besides checkpoint-*/ folders).
RUN_FILES = ("config.json", "model.safetensors", "trainer_state.json", "all_results.json")


@dataclass
class OutputFolderArguments:
    """The one flag that lets a run write into a folder holding an earlier run."""

    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Train into an --output_dir that already holds a trained model or checkpoints (they are "
            "replaced). Without it such a folder is refused, unless --resume_from_checkpoint continues it."
        },
    )


def holds_a_run(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a trained model, its results or resumable checkpoints."""
    path = pathlib.Path(folder)
    return path.is_dir() and (
        any((path / name).exists() for name in RUN_FILES) or any(path.glob("checkpoint-*"))
    )


def refuse_existing(folder: str | os.PathLike, overwrite: bool, flag: str = "--overwrite") -> None:
    """Fail before any work when ``folder`` exists and is not empty, unless ``overwrite``."""
    path = pathlib.Path(folder)
    if not overwrite and path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise FileExistsError(
            f"{path} already exists and is not empty; pass {flag} to replace it, or choose another folder."
        )


@contextlib.contextmanager
def written_whole(folder: str | os.PathLike) -> Iterator[pathlib.Path]:
    """Yield a scratch folder beside ``folder``; on success it replaces ``folder`` in one rename.

    On an exception (or a kill) ``folder`` is untouched and the scratch folder is removed (or,
    after a kill, left under a hidden ``.NAME.partial-PID`` name that nothing loads).
    """
    target = pathlib.Path(folder).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    try:
        yield scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    scratch.rename(target)
    shutil.rmtree(old, ignore_errors=True)
