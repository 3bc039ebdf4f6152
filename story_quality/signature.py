"""The signature every score carries: what made the number, so that others can reproduce it.

Like sacrebleu's signature and bert_score's hashcode, one line names the metric, the package
version, the checkpoint (a Hub id with its revision, or for a local or shipped folder the sha256
of its weights, config and tokenizer files) and every setting that changes a score::

    union|v0.3.0|checkpoint:default@sha256:3a4b8eea5c1e|norm:lowercase+replace_names+roc_tokenize|window:200|long:head|fp32

Report it beside the numbers it produced.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import pathlib
from collections.abc import Mapping

from story_quality.checkpoint_files import WEIGHT_FILES, sha256_of

DISTRIBUTION = "story-quality-metrics"
# Files beside the weights that a checkpoint's scores depend on (config and tokenizer), by glob.
SCORING_FILE_PATTERNS = (
    "config.json", "tokenizer*", "special_tokens_map.json", "added_tokens.json", "vocab*", "merges.txt",
    "*.model", "spiece*",
)  # fmt: skip


def package_version() -> str:
    """The installed version of this project (``0+unknown`` when it is not installed)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


@functools.lru_cache(maxsize=32)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """:func:`sha256_of`, remembered while the file's size and modification time stay the same."""
    return sha256_of(path)


def weights_sha256(folder: str | os.PathLike) -> str | None:
    """The sha256 of a checkpoint folder's weights (shards included), or None when it has none."""
    root = pathlib.Path(folder)
    files = sorted(root.glob("model*.safetensors")) or [
        root / name for name in WEIGHT_FILES if (root / name).is_file()
    ]
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(_file_sha256(str(path), stat.st_size, stat.st_mtime_ns).encode())
    return (
        digest.hexdigest()
        if len(files) > 1
        else _file_sha256(str(files[0]), files[0].stat().st_size, files[0].stat().st_mtime_ns)
    )


def scoring_files(folder: str | os.PathLike) -> list[pathlib.Path]:
    """The files beside a checkpoint's weights that change its scores: the config (labels, recorded
    normalisation, window) and every tokenizer file (a changed vocabulary reads other word pieces)."""
    root = pathlib.Path(folder)
    found = {path for pattern in SCORING_FILE_PATTERNS for path in root.glob(pattern) if path.is_file()}
    return sorted(found - {root / name for name in WEIGHT_FILES})


def checkpoint_sha256(folder: str | os.PathLike) -> str | None:
    """The sha256 of everything in a checkpoint folder that changes a score: its weights
    (:func:`weights_sha256`) and the :func:`scoring_files` beside them, each by name; None when
    the folder holds no weights."""
    weights = weights_sha256(folder)
    if weights is None:
        return None
    digest = hashlib.sha256(f"weights {weights}\n".encode())
    for path in scoring_files(folder):
        stat = path.stat()
        digest.update(f"{path.name} {_file_sha256(str(path), stat.st_size, stat.st_mtime_ns)}\n".encode())
    return digest.hexdigest()


def checkpoint_id(name: str, source: str, revision: str | None = None, local: bool | None = None) -> str:
    """``NAME@sha256:XXXXXXXXXXXX`` for a folder (:func:`checkpoint_sha256`: its weights and the files
    beside them that change a score), ``REPO@REVISION`` for a Hub id.

    >>> checkpoint_id("org/model", "org/model", "abc123", local=False)
    'org/model@abc123'
    """
    local = os.path.isdir(source) if local is None else local
    if local:
        sha = checkpoint_sha256(source)
        label = name if not os.path.isdir(name) else pathlib.Path(name).name
        return f"{label}@sha256:{sha[:12] if sha else 'none'}"
    return f"{source}@{revision or 'main'}"


def normalization_label(flags: Mapping[str, bool | str]) -> str:
    """The normalisation's switched-on options joined by ``+`` (``none`` for the identity); a recorded
    table hash is shortened to 12 digits.

    >>> normalization_label({"lowercase": True, "replace_names": False, "names_sha256": "738a6f0ef98e0ff1"})
    'lowercase+names_sha256:738a6f0ef98e'
    """
    parts = [f"{name}:{on[:12]}" if isinstance(on, str) else name for name, on in flags.items() if on]
    return "+".join(parts) or "none"


def signature(metric: str, *parts: str) -> str:
    """``metric|vVERSION|part|part...``."""
    return "|".join([metric, f"v{package_version()}", *parts])
