"""A checkpoint folder's files: their names, their sha256, and whether the folder is whole.

The one place the weight file names are written (the metrics' checks, the signature's weights
hash, the trainer's resume check) and the one sha256 of a file (the shipped default's manifest,
the signature).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

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


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, as ``sha256sum`` prints it, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
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
