"""Length-sorted batching for both metrics: sequences of similar length share a batch, so padding
stays small, and every result is written back to its input position (scores never depend on
batch order); progress bars that ``evaluate.logging.disable_progress_bar()`` silences."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices into ``lengths``, longest first, in groups of at most ``batch_size``."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device | str):
    """``(input_ids, attention_mask)`` right-padded to the longest sequence of the batch."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids.to(device), mask.to(device)


def progress(
    iterable=None, total: int | None = None, desc: str = "", unit: str = "batch", leave: bool = False
):
    """A progress bar over long work that honours ``evaluate``'s progress-bar switch (silent for one step)."""
    from evaluate.utils.logging import is_progress_bar_enabled
    from tqdm.auto import tqdm

    total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
    quiet = not is_progress_bar_enabled() or (total is not None and total < 2)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, disable=quiet)
