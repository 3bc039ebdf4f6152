"""Frozen sentence embeddings of a pretrained encoder, computed once and cached under their sha256.

The fluent negatives (:mod:`.fluent_candidates`) look up each sentence's nearest neighbours among other
stories' sentences. The embedding is the one sentence-transformers defines for
``all-MiniLM-L6-v2``: the mean of the last hidden states over the sentence's word pieces, scaled
to unit length, so a dot product is the cosine. Computing it for every sentence of a corpus takes
a minute or two on 2 cores, so the matrix is kept in a cache folder: its file name is the sha256
of what determines it (the encoder's files, the piece limit, the sentences, in order) and a JSON
record beside it holds the matrix's own sha256, checked on every read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pathlib
from collections.abc import Sequence

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from story_quality.batching import progress

logger = logging.getLogger(__name__)

MAX_PIECES = 128  # word pieces read per sentence; longer sentences keep their head
# The files of a checkpoint folder that decide what it computes.
_ENCODER_FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "tokenizer_config.json")


def encoder_sha256(encoder: str | pathlib.Path) -> str:
    """sha256 over the files of ``encoder`` (a local folder) that decide its embeddings."""
    folder = pathlib.Path(encoder)
    if not folder.is_dir():
        raise ValueError(f"--encoder {encoder}: not a folder; name a local encoder checkpoint folder.")
    digest = hashlib.sha256()
    present = [name for name in _ENCODER_FILES if (folder / name).is_file()]
    if "config.json" not in present:
        raise ValueError(f"--encoder {encoder}: no config.json there; it is not a checkpoint folder.")
    for name in present:
        digest.update(name.encode() + b"\0" + hashlib.sha256((folder / name).read_bytes()).digest())
    return digest.hexdigest()


def cache_key(encoder_hash: str, sentences: Sequence[str], max_pieces: int = MAX_PIECES) -> str:
    """sha256 of everything the embedding matrix depends on."""
    digest = hashlib.sha256(f"{encoder_hash}\0{max_pieces}\0{len(sentences)}\0".encode())
    for sentence in sentences:
        digest.update(sentence.encode() + b"\n")
    return digest.hexdigest()


def array_sha256(matrix: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(matrix, dtype=np.float32).tobytes()).hexdigest()


@torch.inference_mode()
def embed(
    encoder: str | pathlib.Path, sentences: Sequence[str], batch_size: int = 256, max_pieces: int = MAX_PIECES
) -> np.ndarray:
    """Unit-length mean-pooled embeddings of ``sentences`` (float32, one row each, input order)."""
    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    model = AutoModel.from_pretrained(str(encoder)).eval()
    out = np.zeros((len(sentences), model.config.hidden_size), dtype=np.float32)
    # Shortest first, so each batch pads little; rows go back to input order.
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    with progress(total=len(sentences), desc="Embedding sentences", unit="sentence") as bar:
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = tokenizer(
                [sentences[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=max_pieces,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
            bar.update(len(rows))
    return out


def cached_embeddings(
    encoder: str | pathlib.Path,
    sentences: Sequence[str],
    cache_dir: str | pathlib.Path | None,
    batch_size: int = 256,
) -> tuple[np.ndarray, dict[str, str]]:
    """The embeddings of ``sentences`` and their record (key, sha256, encoder); read from
    ``cache_dir`` when an earlier run left them there, else computed and left there."""
    encoder_hash = encoder_sha256(encoder)
    key = cache_key(encoder_hash, sentences)
    record = {"key": key, "encoder_sha256": encoder_hash, "sentences": str(len(sentences))}
    if cache_dir is None:
        matrix = embed(encoder, sentences, batch_size)
        return matrix, {**record, "sha256": array_sha256(matrix), "cached": "no"}
    folder = pathlib.Path(cache_dir)
    matrix_path, record_path = folder / f"embeddings-{key}.npy", folder / f"embeddings-{key}.json"
    if matrix_path.is_file() and record_path.is_file():
        matrix = np.load(matrix_path)
        kept = json.loads(record_path.read_text(encoding="utf-8"))
        if kept.get("sha256") == array_sha256(matrix) and matrix.shape[0] == len(sentences):
            logger.info("Sentence embeddings read from the cache: %s", matrix_path)
            return matrix, {**kept, "cached": "read"}
        logger.warning("Cached embeddings %s do not match their sha256; computing them again", matrix_path)
    matrix = embed(encoder, sentences, batch_size)
    record["sha256"] = array_sha256(matrix)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = matrix_path.with_suffix(".partial.npy")
    np.save(scratch, matrix)
    scratch.replace(matrix_path)
    record_path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return matrix, {**record, "cached": "written"}
