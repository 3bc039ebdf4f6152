"""Is a local checkpoint folder whole? The first missing or damaged file, said plainly (both metrics)."""

from __future__ import annotations

import json
import pathlib

# A local checkpoint folder needs these; any one of the tokenizer files will do.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer.model", "spiece.model", "vocab.json")
WEIGHTS_FILE = "model.safetensors"
CHECKPOINT_LAYOUT = "config.json, a tokenizer (tokenizer.json or vocab.txt) and model.safetensors"


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
        if (folder / f"{WEIGHTS_FILE}.index.json").is_file():
            return None  # sharded weights: from_pretrained checks each shard
        if any(folder.glob("*.bin")):
            return (
                "it holds only PyTorch pickle weights (*.bin), which are not loaded because unpickling can run "
                "code; re-save it with save_pretrained(folder, safe_serialization=True)"
            )
        return f"{WEIGHTS_FILE} is missing"
    return safetensors_problem(weights)
