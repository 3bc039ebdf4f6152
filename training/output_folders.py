"""Output folders that are never lost: refuse to reuse one by accident, and publish a new one whole.

A training run or a built corpus can take hours; writing it over an earlier one because a
folder name was reused costs those hours. A build interrupted half-way must not leave a folder
that later loads as a complete corpus, so builds are written beside the target and moved into
place in one rename.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

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
        "run_record.json",  # RUN_RECORD
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


@dataclass(frozen=True)
class OutputKind:
    """What one tool writes into its output folder, and the file that marks the folder as its own.

    A folder is replaced only when it holds the ``marker`` and nothing but ``names`` (or names
    matching ``pattern``): another tool's folder, another model's, or a folder of someone's
    notes is never written into.
    """

    made_by: str  # "a corpus build": the tool, in messages
    holds: str  # "a built corpus": what an earlier output of the tool is, in messages
    marker: str
    names: frozenset[str]
    pattern: re.Pattern[str] = re.compile(r"(?!)")  # matches nothing

    def foreign(self, folder: pathlib.Path) -> list[str]:
        return foreign_entries(folder, self.names | {self.marker}, self.pattern)


# A saved dataset: its shards, and the cache files ``datasets`` writes beside them when the
# loaded corpus is mapped or filtered (a training run does), which belong to the corpus.
_DATASET_ENTRY = re.compile(r"data-\d{5}-of-\d{5}\.arrow|cache-[\w.-]+\.arrow|tmp\w+")
CORPUS = OutputKind(
    "a corpus build", "a built corpus", "union_build_summary.json", CORPUS_WRITES, _DATASET_ENTRY
)


def saved_dataset(made_by: str, holds: str, marker: str) -> OutputKind:
    """The output of a tool that writes one saved dataset and its summary file ``marker``."""
    return OutputKind(made_by, holds, marker, frozenset({"dataset_info.json", "state.json"}), _DATASET_ENTRY)


def _names(entries: Sequence[str]) -> str:
    return ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")


def refuse_input_as_output(
    output: str | os.PathLike, inputs: Sequence[str | os.PathLike], option: str = "--output-dir"
) -> None:
    """Fail when ``output`` is one of ``inputs`` or a folder holding one: writing it would replace its input."""
    resolved = pathlib.Path(output).resolve()
    for source in inputs:
        source_path = pathlib.Path(source).resolve()
        if source_path == resolved or resolved in source_path.parents:
            raise FileExistsError(
                f"{option} {output} {'is' if source_path == resolved else 'holds'} the input {source}; "
                "writing it would replace its input. Choose another folder."
            )


def check_output_folder(
    folder: str | os.PathLike,
    kind: OutputKind,
    overwrite: bool | None,
    inputs: Sequence[str | os.PathLike] = (),
    option: str = "--output-dir",
    flag: str = "--overwrite",
) -> None:
    """Fail before any work unless ``folder`` is new, empty, or an earlier output of ``kind``.

    An earlier output is replaced only with ``overwrite`` (``None``: the tool replaces its own
    output without a flag). Never: a folder that is or holds one of ``inputs``, a file, a folder
    holding anything ``kind`` does not write, or one without ``kind``'s marker.
    """
    refuse_input_as_output(folder, inputs, option)
    path = pathlib.Path(folder)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"{option} {path} is a file, not a folder; choose another folder.")
    if not any(path.iterdir()):
        return
    foreign = kind.foreign(path)
    if foreign:
        raise FileExistsError(
            f"{option} {path} holds files {kind.made_by} did not write ({_names(foreign)}); it is never "
            "replaced. Choose another folder."
        )
    if not (path / kind.marker).is_file():
        raise FileExistsError(
            f"{option} {path} was not written by {kind.made_by} (it has no {kind.marker}); it is never "
            "replaced. Choose another folder."
        )
    if overwrite is False:
        raise FileExistsError(
            f"{path} already holds {kind.holds}; pass {flag} to replace it, or choose another folder."
        )


def refuse_existing(
    folder: str | os.PathLike,
    overwrite: bool,
    flag: str = "--overwrite",
    inputs: Sequence[str | os.PathLike] = (),
) -> None:
    """Fail before any work unless ``folder`` is new, empty, or (with ``overwrite``) an earlier corpus."""
    check_output_folder(folder, CORPUS, overwrite, inputs, flag=flag)


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
    started = any(p.name != RUN_RECORD for p in path.iterdir())  # a run stopped before saving: empty
    if foreign or (started and not holds_a_run(path)):
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


@contextlib.contextmanager
def written_whole_file(path: str | os.PathLike) -> Iterator[pathlib.Path]:
    """Yield a scratch file beside ``path``; on success it replaces ``path`` in one rename (never half-written)."""
    target = pathlib.Path(path).resolve()
    scratch = target.parent / f".{target.name}.partial-{os.getpid()}"
    try:
        yield scratch
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
    os.replace(scratch, target)


# --- resuming a training run: the same model and data, or a clear refusal ------------------------

RUN_RECORD = "run_record.json"


def read_run_record(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The facts a run recorded in ``folder`` (its model, window, data's sha256), or None."""
    path = pathlib.Path(folder) / RUN_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def write_run_record(folder: str | os.PathLike, facts: dict[str, Any]) -> None:
    """Record ``facts`` (merged into what ``folder`` already records) for a later resume to compare."""
    path = pathlib.Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    record = {**(read_run_record(path) or {}), **facts}
    with written_whole_file(path / RUN_RECORD) as scratch:
        scratch.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def check_resumed_run(checkpoint: str | os.PathLike, facts: dict[str, Any]) -> None:
    """Fail when ``facts`` differ from those the run that wrote ``checkpoint`` recorded, naming each.

    The record lives in the checkpoint's run folder (its parent); a run that recorded nothing
    (older than the record) is not compared. Only facts both sides know are compared.
    """
    recorded = read_run_record(pathlib.Path(checkpoint).resolve().parent)
    if recorded is None:
        return
    differences = [
        f"{key} {facts[key]!r} (the run used {recorded[key]!r})"
        for key in sorted(facts.keys() & recorded.keys())
        if facts[key] != recorded[key]
    ]
    if differences:
        raise ValueError(
            f"--resume_from_checkpoint {checkpoint}: this run differs from the one being resumed: "
            f"{'; '.join(differences)}. Resume with the run's settings, or train afresh into another --output_dir."
        )
