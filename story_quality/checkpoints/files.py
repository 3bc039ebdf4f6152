"""A checkpoint folder's files: their names, their sha256, and whether the folder is whole.

The one place the weight file names are written (the metrics' checks, the signature's hash, the
trainer's resume check), the one sha256 of a file (the shipped default's manifest, the human
scale's tables) and the one sha256 of a checkpoint folder (what a signature names a folder by).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import threading
from concurrent.futures import Future

# A local checkpoint folder needs these; any one of the tokenizer files will do.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer.model", "spiece.model", "vocab.json")
WEIGHTS_FILE = "model.safetensors"
# Sharded safetensors weights: the index names the shards (model-00001-of-0000N.safetensors ...).
WEIGHTS_INDEX_FILE = f"{WEIGHTS_FILE}.index.json"
WEIGHT_FILES = (WEIGHTS_FILE, WEIGHTS_INDEX_FILE)
# PyTorch pickle weights: never loaded by the metrics (unpickling can run code); a Trainer
# checkpoint saved with save_safetensors=False holds them.
PICKLE_WEIGHTS_FILE = "pytorch_model.bin"
CHECKPOINT_LAYOUT = "config.json, a tokenizer (tokenizer.json or vocab.txt) and model.safetensors"
# Files beside the weights that a checkpoint's scores depend on (config and tokenizer), by glob.
SCORING_FILE_PATTERNS = (
    "config.json", "tokenizer*", "special_tokens_map.json", "added_tokens.json", "vocab*", "merges.txt",
    "*.model", "spiece*",
)  # fmt: skip


# Bytes read at a time into one reused buffer: a fresh block per read costs its allocation, and
# a hashing thread takes the interpreter's lock once per block.
HASH_BLOCK = 4 << 20


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, as ``sha256sum`` prints it, read in :data:`HASH_BLOCK` blocks."""
    digest = hashlib.sha256()
    block = memoryview(bytearray(HASH_BLOCK))
    with open(path, "rb", buffering=0) as handle:
        while size := handle.readinto(block):
            digest.update(block[:size])
    return digest.hexdigest()


def safetensors_problem(path: pathlib.Path) -> str | None:
    """Why ``path`` is not a whole safetensors file (truncated, bad header), or None.

    Reads the 8-byte header length and the JSON header only: a file cut short by a failed
    copy or download is caught before any tensor is read.
    """
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        length = int.from_bytes(head, "little") if len(head) == 8 else -1
        if length < 0 or 8 + length > size:
            return f"{path.name} is truncated ({size:,} bytes: its header runs past the end)"
        try:
            header = json.loads(f.read(length))
            end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
        except (ValueError, KeyError, TypeError, AttributeError):
            return f"{path.name} is damaged (its header is not safetensors JSON)"
    if 8 + length + end != size:
        return f"{path.name} is truncated or damaged ({size:,} bytes where its header describes {8 + length + end:,})"
    return None


def local_checkpoint_problem(folder: pathlib.Path) -> str | None:
    """The first missing or bad file of a local checkpoint folder, said plainly; None if it looks whole."""
    if not (folder / "config.json").is_file():
        return "config.json is missing"
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return f"the tokenizer is missing (none of {', '.join(TOKENIZER_FILES)})"
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        if (folder / WEIGHTS_INDEX_FILE).is_file():
            return None  # sharded weights: from_pretrained checks each shard
        if any(folder.glob("*.bin")):
            return (
                "it holds only PyTorch pickle weights (*.bin), which are not loaded because unpickling can run "
                "code; re-save it with save_pretrained(folder, safe_serialization=True)"
            )
        return f"{WEIGHTS_FILE} is missing"
    return safetensors_problem(weights)


# Each file's sha256 by (path, size, modification time), made in this process (its id beside it: a
# forked child recomputes what its parent's threads were hashing); the latest KEPT_HASHES kept.
_HASHES: dict[tuple[str, int, int], tuple[int, Future[str]]] = {}
_HASHES_LOCK = threading.Lock()
KEPT_HASHES = 64


def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """:func:`sha256_of`, remembered while the file's size and modification time stay the same; one
    that :func:`hash_ahead` is hashing is waited for."""
    key = (path, size, mtime_ns)
    with _HASHES_LOCK:
        kept = _HASHES.get(key)
    if kept is not None and kept[0] == os.getpid():
        try:
            return kept[1].result()
        except OSError:
            pass  # the file changed while it was hashed ahead: hashed here, any error raised as it is
    digest: Future[str] = Future()
    digest.set_result(sha256_of(path))
    _keep({key: digest})
    return digest.result()


def _keep(futures: dict[tuple[str, int, int], Future[str]]) -> None:
    with _HASHES_LOCK:
        for key, future in futures.items():
            _HASHES.pop(key, None)
            _HASHES[key] = (os.getpid(), future)
        for key in list(_HASHES)[: max(0, len(_HASHES) - KEPT_HASHES)]:
            del _HASHES[key]


def hash_ahead(*folders: str | os.PathLike) -> None:
    """Start hashing what :func:`checkpoint_sha256` reads of local checkpoint folders, one file after
    another on one thread of its own: hashlib and file reads let go of the interpreter, so a caller
    that loads and tokenises meanwhile later finds the digests made (a BERT-base checkpoint: 0.3-0.7
    s of one core). One thread, not one per folder, leaves the caller a core of its own. Files
    already hashed are not read again; a folder without weights adds nothing."""
    keys = []
    for folder in folders:
        weights = _weight_files(pathlib.Path(folder))
        if weights:
            files = [*weights, *scoring_files(folder)]
            keys += [(str(path), path.stat().st_size, path.stat().st_mtime_ns) for path in files]
    with _HASHES_LOCK:
        new = [key for key in keys if _HASHES.get(key, (None,))[0] != os.getpid()]
    if not new:
        return
    futures: dict[tuple[str, int, int], Future[str]] = {key: Future() for key in new}
    _keep(futures)
    threading.Thread(target=_hash_into, args=(futures,), name="sha256-ahead", daemon=True).start()


def _hash_into(futures: dict[tuple[str, int, int], Future[str]]) -> None:
    for (path, _, _), future in futures.items():
        try:
            future.set_result(sha256_of(path))
        except BaseException as error:  # handed to the caller that waits for it
            future.set_exception(error)


def _weight_files(root: pathlib.Path) -> list[pathlib.Path]:
    """A checkpoint folder's weight files: its safetensors shards, or else the files of :data:`WEIGHT_FILES`."""
    return sorted(root.glob("model*.safetensors")) or [
        root / name for name in WEIGHT_FILES if (root / name).is_file()
    ]


def weights_sha256(folder: str | os.PathLike) -> str | None:
    """The sha256 of a checkpoint folder's weights (shards included), or None when it has none."""
    files = _weight_files(pathlib.Path(folder))
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
