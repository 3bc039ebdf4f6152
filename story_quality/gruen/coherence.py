"""Structure and coherence: ALBERT's sentence-order prediction at every split point (GRUEN, Sec. 2.4).

For a text of n sentences and each k in 1..n-1, segment A is sentences 1..k and segment B
sentences k+1..n, given as ``[CLS] A [SEP] B [SEP]`` (token types 0 then 1). The loss is the
cross-entropy of the "original order" label (0); the score is minus its mean over split
points (0 is perfect, lower is worse). A text of one sentence has no order to judge and
scores 0. When a pair is longer than the window, A keeps its *last* tokens and B its
*first* ones (the tokens next to the split), each getting half the room unless the other
needs less. The authors never released this part; this follows the paper's ``-SOP loss``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from story_quality.batching import length_sorted_batches, pad_batch, progress
from story_quality.gruen.loading import LoadedModel
from story_quality.gruen.tokenization import encode_words

ORIGINAL_ORDER = 0


def split_pair(a: list[int], b: list[int], room: int) -> tuple[list[int], list[int]]:
    """Cut ``a`` from the left and ``b`` from the right until both fit in ``room`` tokens."""
    if len(a) + len(b) <= room:
        return a, b
    keep_a = max(room // 2, room - len(b))
    keep_b = room - min(len(a), keep_a)
    return a[len(a) - min(len(a), keep_a) :], b[:keep_b]


def split_point_inputs(
    loaded: LoadedModel, sentence_ids: Sequence[list[int]]
) -> list[tuple[list[int], list[int]]]:
    """``(input_ids, token_type_ids)`` for each split point of one text."""
    tokenizer = loaded.tokenizer
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise ValueError("sop_model's tokenizer needs [CLS] and [SEP] tokens (an ALBERT/BERT-style model)")
    cls, sep = [tokenizer.cls_token_id], [tokenizer.sep_token_id]
    inputs = []
    for k in range(1, len(sentence_ids)):
        a = [t for ids in sentence_ids[:k] for t in ids]
        b = [t for ids in sentence_ids[k:] for t in ids]
        a, b = split_pair(a, b, loaded.window - 3)
        inputs.append((cls + a + sep + b + sep, [0] * (len(a) + 2) + [1] * (len(b) + 1)))
    return inputs


@torch.inference_mode()
def coherence_scores(loaded: LoadedModel, texts: Sequence[Sequence[str]], batch_size: int) -> list[float]:
    """``-mean SOP loss`` over the split points of each text (0.0 for texts of under two sentences)."""
    flat = [s for sentences in texts for s in sentences]
    ids = encode_words(loaded, flat) if flat else []
    pairs, owners, start = [], [], 0
    for t, sentences in enumerate(texts):
        for pair in split_point_inputs(loaded, ids[start : start + len(sentences)]):
            pairs.append(pair)
            owners.append(t)
        start += len(sentences)
    totals, counts = [0.0] * len(texts), [0] * len(texts)
    device = loaded.model.device
    pad_id = loaded.tokenizer.pad_token_id or 0
    batches = list(length_sorted_batches([len(p[0]) for p in pairs], batch_size))
    for batch in progress(batches, len(batches), "GRUEN sentence order"):
        input_ids, mask = pad_batch([pairs[i][0] for i in batch], pad_id, device)
        token_types, _ = pad_batch([pairs[i][1] for i in batch], 0, device)
        out = loaded.model(input_ids=input_ids, attention_mask=mask, token_type_ids=token_types)
        if getattr(out, "sop_logits", None) is None:
            raise ValueError(
                "sop_model must be a pre-training model with a sentence-order head (e.g. ALBERT)"
            )
        target = torch.full((len(batch),), ORIGINAL_ORDER, device=device)
        losses = F.cross_entropy(out.sop_logits.float(), target, reduction="none").tolist()
        for index, loss in zip(batch, losses, strict=True):
            totals[owners[index]] += loss
            counts[owners[index]] += 1
    return [-total / count if count else 0.0 for total, count in zip(totals, counts, strict=True)]
