"""Fast, order-independent batched inference of a sequence classifier over encoded stories.

Kept apart from the scorer (:mod:`story_quality.union.scorer`) so that the benchmarks, training
and the tests drive the same code the metric runs. The encoded texts (:mod:`story_quality.union.encoding`) are sorted by
length and padded per batch, so a batch of short stories never pays for one long story; scores
are put back in input order.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from story_quality.batching import length_sorted_batches, pad_batch
from story_quality.precision import autocast
from story_quality.union.encoding import Encoded


def class_probabilities(
    logits_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    encoded: Encoded,
    label_index: int,
    pad_id: int,
    batch_size: int,
    device: torch.device,
    precision: str = "fp32",
    progress=None,
) -> list[float]:
    """P(label) for every encoded text, in input order.

    ``logits_fn(input_ids, attention_mask)`` returns the classifier's logits, run in ``precision``
    (:mod:`story_quality.precision`); ``progress`` wraps the batch iterator.
    """
    lengths = [len(r) for r in encoded.input_ids]
    batches = list(length_sorted_batches(lengths, batch_size))
    scores = [0.0] * len(lengths)
    with torch.inference_mode(), autocast(precision, device):
        for batch in progress(batches) if progress else batches:
            input_ids, attention_mask = pad_batch([encoded.input_ids[i] for i in batch], pad_id, device)
            logits = logits_fn(input_ids, attention_mask).float()
            probs = torch.softmax(logits, dim=-1)[:, label_index].tolist()
            for i, p in zip(batch, probs, strict=True):
                scores[i] = p
    return scores
