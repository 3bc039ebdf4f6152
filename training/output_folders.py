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
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

_CORPUS_SHARD = re.compile(r"data-\d{5}-of-\d{5}\.arrow")
_RUN_ENTRY = re.compile(r"checkpoint-\d+|\w+_results\.json|events\.out\..*")

# Files a finished or interrupted run leaves in its output folder (besides checkpoint-*/ folders).
RUN_FILES = ("config.json", "model.safetensors", "trainer_state.json", "all_results.json")
# Everything a training run may write into its output folder: only these are ever replaced.
RUN_WRITES = frozenset(
    {
        *RUN_FILES,
        "README.md",
        "training_args.bin",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
        "added_tokens.json",
        "chat_template.jinja",
        "generation_config.json",
        "train_results.json",
        "eval_results.json",
        "annotated_results.json",
        "validation_results.json",
        "runs",
    }
)
# What a corpus build writes (``datasets.save_to_disk`` and the build summary).
CORPUS_WRITES = frozenset({"dataset_info.json", "state.json", "union_build_summary.json"})


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


def foreign_entries(folder: pathlib.Path, ours: frozenset[str], pattern: re.Pattern[str]) -> list[str]:
    """Names in ``folder`` that the tool did not write (not in ``ours``, not matching ``pattern``)."""
    return sorted(p.name for p in folder.iterdir() if p.name not in ours and not pattern.fullmatch(p.name))


def refuse_existing(
    folder: str | os.PathLike,
    overwrite: bool,
    flag: str = "--overwrite",
    inputs: Sequence[str | os.PathLike] = (),
) -> None:
    """Fail before any work unless ``folder`` is new, empty, or (with ``overwrite``) an earlier corpus.

    Never lost: a folder holding any of ``inputs`` (or being one), a file, or a folder with
    anything a corpus build does not write is refused even with ``overwrite``.
    """
    path = pathlib.Path(folder)
    resolved = path.resolve()
    for source in inputs:
        source_path = pathlib.Path(source).resolve()
        if source_path == resolved or resolved in source_path.parents:
            raise FileExistsError(
                f"--output-dir {path} holds the input {source}; the corpus would replace it. Choose another folder."
            )
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"--output-dir {path} is a file, not a folder; choose another folder.")
    if not any(path.iterdir()):
        return
    foreign = foreign_entries(path, CORPUS_WRITES, _CORPUS_SHARD)
    if foreign:
        raise FileExistsError(
            f"--output-dir {path} holds files a corpus build did not write ({', '.join(foreign[:5])}"
            f"{', ...' if len(foreign) > 5 else ''}); it is never replaced. Choose another folder."
        )
    if not overwrite:
        raise FileExistsError(
            f"{path} already holds a built corpus; pass {flag} to replace it, or choose another folder."
        )


def probe_writable(folder: str | os.PathLike, option: str = "--output-dir") -> None:
    """Fail before any work when ``folder`` cannot be created or written (read-only, under a file)."""
    path = pathlib.Path(folder).resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.probe-").cleanup()
    except OSError as error:
        raise PermissionError(
            f"{option} {folder}: cannot write there ({error.strerror or error}); choose a writable folder."
        ) from None


def refuse_foreign_run_folder(folder: str | os.PathLike) -> None:
    """Fail when a training ``folder`` holds anything a training run does not write (a user's files)."""
    path = pathlib.Path(folder)
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"--output_dir {path} is a file, not a folder; choose another folder.")
    if not path.is_dir():
        return
    foreign = foreign_entries(path, RUN_WRITES, _RUN_ENTRY)
    if foreign or (any(path.iterdir()) and not holds_a_run(path)):
        names = foreign or sorted(p.name for p in path.iterdir())
        raise FileExistsError(
            f"--output_dir {path} holds files a training run did not write ({', '.join(names[:5])}"
            f"{', ...' if len(names) > 5 else ''}); they would be overwritten. Choose an empty or new folder."
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
