"""The sha256 of a built corpus's rows, which summaries, cards and resumed runs record."""

from __future__ import annotations

import hashlib

import datasets


def corpus_sha256(dataset: datasets.Dataset) -> str:
    """sha256 of a built corpus's rows (label, text, in order): a rerun that gives this built the same data."""
    digest = hashlib.sha256()
    for start in range(0, len(dataset), 10_000):
        batch = dataset[start : start + 10_000]
        for label, text in zip(batch["label"], batch["text"], strict=True):
            digest.update(f"{label}\t{text}\n".encode())
    return digest.hexdigest()
