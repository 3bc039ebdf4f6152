"""Grammaticality: a masked-LM fluency term plus a CoLA acceptability term (GRUEN, Sec. 2.1).

``reference`` scoring reproduces the release: one *unmasked* pass per sentence with the
input as its own labels (``[CLS]``/``[SEP]`` included) and ``exp(mean cross-entropy)``,
averaged over the sentences; the term is ``exp(-0.5 * lm)``.

``pll`` scoring computes what the paper describes, a pseudo-log-likelihood: every word
piece is masked in turn (special tokens are not) and scored given the rest. All masked
copies of all sentences are flattened into one length-sorted stream, and the LM head (a
768 x vocabulary projection) runs only at the masked position of each copy. Its rescaling:
the same ``exp(-0.5 * x)`` applied to the mean masked negative log-likelihood per token
(averaged over sentences), because pseudo-perplexities of real text (about 3 to 30) would
send ``exp(-0.5 * perplexity)`` to zero.

The CoLA term is the raw logit of class 1 ("acceptable") at 128 tokens, averaged over
sentences, and the two terms combine as released: ``max(0, (lm_term + cola) / 8 + 0.5)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from transformers.models.bert.modeling_bert import BertOnlyMLMHead

from story_quality.batching import length_sorted_batches, pad_batch, progress
from story_quality.bert_forward import onednn_products
from story_quality.bert_forward.exact_products import MIN_ROWS, exact_cpu_product, row_slices
from story_quality.bert_forward.packed_layers import last_hidden_rows
from story_quality.gruen.loading import LoadedModel
from story_quality.gruen.tokenization import encode_single

COLA_MAX_LENGTH = 128
# Positions per oneDNN vocabulary product: 16 MB of logits for BERT's vocabulary, read back by
# log_softmax from the cache. oneDNN writes each piece's logits into fresh memory; at 256 positions
# (31 MB) glibc often mapped it from the system anew, page by page, and a fifth of the pieces took
# nearly three times as long (the speeds: benchmarks/log/2026-11-28-onednn-fp32.md).
ONEDNN_HEAD_POSITIONS = 128
HEAD_CHUNK = 1024  # positions per LM-head call: bounds the (positions x vocabulary) logits in memory
COPY_BLOCK = 256  # vocabulary columns per block when copied row-major (1.5x-3x faster than whole)


def split_masked_lm(model: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Module] | None:
    """``(encoder, head)`` of a masked LM whose head is its one module besides the encoder."""
    encoder = getattr(model, "base_model", model)
    heads = [m for m in model.children() if m is not encoder]
    return (encoder, heads[0]) if encoder is not model and len(heads) == 1 else None


def _bert_head_parts(head: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Linear] | None:
    """``(transform, decoder)`` of a BERT masked-LM head, whose logits are ``decoder(transform(h))``."""
    if not isinstance(head, BertOnlyMLMHead):
        return None
    decoder = head.predictions.decoder
    if not isinstance(decoder, torch.nn.Linear) or decoder.bias is None:
        return None
    return head.predictions.transform, decoder


class LossesAt:
    """The masked LM's cross-entropy at chosen positions of batch after batch; the head runs on
    ``HEAD_CHUNK`` positions at a time.

    For a BERT head in fp32 on a CPU, the losses equal ``F.cross_entropy(head(h))`` bit for bit and
    cost about 0.7 of its time (1,024 positions, BERT's vocabulary, 2 cores):

    * the vocabulary product is written column-major (each column aligned), which MKL computes
      as the transposed product, 1.3x-1.6x faster than row-major on 2 cores, and is then copied
      row-major block by block; from :data:`MIN_ROWS` rows on, the bits are the row-major
      product's (:mod:`story_quality.bert_forward.exact_products`);
    * the logits go into buffers that all batches reuse and become log-probabilities in place:
      the same ``log_softmax`` kernel, without two fresh tensors of over 100 MB per chunk.
    """

    def __init__(self, loaded: LoadedModel) -> None:
        self.model = loaded.model
        self.bert_layers = loaded.bert_layers
        self.parts = split_masked_lm(loaded.model)
        self.bert_head = None if self.parts is None else _bert_head_parts(self.parts[1])
        self._buffers: dict[str, torch.Tensor] = {}

    @torch.inference_mode()
    def __call__(self, input_ids, mask, rows, cols, targets) -> torch.Tensor:
        if self.parts is None:  # head not separable: full forward, then pick the positions
            logits = self.model(input_ids=input_ids, attention_mask=mask).logits[rows, cols]
            return F.cross_entropy(logits.float(), targets, reduction="none")
        encoder, head = self.parts
        hidden = self._hidden_at(encoder, input_ids, mask, rows, cols)
        chunks = [
            (start, hidden[start : start + HEAD_CHUNK]) for start in range(0, hidden.shape[0], HEAD_CHUNK)
        ]
        bert_head = self.bert_head
        if bert_head is None or not (exact_cpu_product(hidden) and exact_cpu_product(bert_head[1].weight)):
            return torch.cat(
                [
                    F.cross_entropy(head(h).float(), targets[s : s + len(h)], reduction="none")
                    for s, h in chunks
                ]
            )
        return torch.cat([self._bert_losses(*bert_head, h, targets[s : s + len(h)]) for s, h in chunks])

    def _hidden_at(
        self,
        encoder: torch.nn.Module,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        rows: torch.Tensor,
        cols: torch.Tensor,
    ) -> torch.Tensor:
        """The encoder's last states at the positions: a plain BERT's through its packed layers
        (:mod:`story_quality.bert_forward.packed_layers`), any other encoder through its own forward."""
        if self.bert_layers is None:
            return encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state[rows, cols]
        real = mask.bool()
        states = last_hidden_rows(self.bert_layers, input_ids, real)  # [real tokens, d], row after row
        index = torch.full(real.shape, -1, dtype=torch.long, device=real.device)
        index[real] = torch.arange(len(states), device=real.device)
        return states.index_select(0, index[rows, cols])

    def _bert_losses(
        self, transform: torch.nn.Module, decoder: torch.nn.Linear, part: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        if onednn_products.routes_to_onednn(part, decoder.weight, decoder.bias):
            return _onednn_losses(transform, decoder, part, targets)
        positions, vocabulary = part.shape[0], decoder.out_features
        logits = self._buffer("logits", positions * vocabulary, part).view(positions, vocabulary)
        product = (decoder.bias, transform(part), decoder.weight.t())
        if positions >= MIN_ROWS:
            stride = aligned(positions)
            columns = self._buffer("columns", stride * vocabulary, part).view(vocabulary, stride)
            columns = torch.addmm(*product, out=columns[:, :positions].t())
            for start in range(0, vocabulary, COPY_BLOCK):
                logits[:, start : start + COPY_BLOCK].copy_(columns[:, start : start + COPY_BLOCK])
        else:
            torch.addmm(*product, out=logits)
        return _losses_in_place(logits, targets)

    def _buffer(self, name: str, elements: int, like: torch.Tensor) -> torch.Tensor:
        """The first ``elements`` of a flat buffer kept for the next chunks and batches."""
        buffer = self._buffers.get(name)
        if buffer is None or buffer.numel() < elements or buffer.device != like.device:
            largest = aligned(HEAD_CHUNK) * self.bert_head[1].out_features
            buffer = torch.empty(max(elements, largest), dtype=like.dtype, device=like.device)
            self._buffers[name] = buffer
        return buffer[:elements]


def _losses_in_place(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The cross-entropy of each row of ``logits`` [positions, vocabulary] at its target, as
    ``F.cross_entropy`` computes it bit for bit, with the logits turned into log-probabilities in
    place (the same ``log_softmax`` kernel, no fresh tensor of positions x vocabulary)."""
    log_probs = torch.log_softmax(logits, 1, out=logits)
    return -log_probs[torch.arange(len(logits), device=logits.device), targets]


def _onednn_losses(
    transform: torch.nn.Module, decoder: torch.nn.Linear, part: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """``F.cross_entropy(head(part))`` bit for bit under ``precision="fp32-onednn"``, in pieces of
    at most :data:`ONEDNN_HEAD_POSITIONS` positions whose logits oneDNN writes fresh and
    ``log_softmax`` turns into log-probabilities in place while they are in the cache, faster than
    the whole chunk's cross-entropy (benchmarks/log/2026-11-28-onednn-fp32.md)."""
    states = transform(part)
    losses = []
    with onednn_products.own_routing():
        for rows in row_slices(len(states), ONEDNN_HEAD_POSITIONS):
            logits = onednn_products.onednn_linear(states[rows], decoder.weight, decoder.bias)
            losses.append(_losses_in_place(logits, targets[rows]))
        return torch.cat(losses)


def aligned(positions: int) -> int:
    """``positions`` rounded up to a multiple of 16: a column-major product's leading dimension
    that keeps every column aligned to whole vectors (up to 1.5x faster than an unaligned one)."""
    return -(-positions // 16) * 16


def _padded_batches(loaded: LoadedModel, ids: Sequence[Sequence[int]], batch_size: int, desc: str):
    """``(indices, input_ids, attention_mask)`` of length-sorted batches, padded per batch, on the model's device."""
    pad_id = loaded.tokenizer.pad_token_id or 0
    batches = list(length_sorted_batches([len(x) for x in ids], batch_size))
    for batch in progress(batches, len(batches), desc):
        input_ids, mask = pad_batch([ids[i] for i in batch], pad_id, loaded.model.device)
        yield batch, input_ids, mask


@torch.inference_mode()
def reference_lm_scores(loaded: LoadedModel, sentences: Sequence[str], batch_size: int) -> list[float]:
    """The release's LM value of each sentence: ``exp`` of the mean unmasked cross-entropy."""
    ids, _ = encode_single(loaded, sentences, what="masked LM")
    scores = [0.0] * len(sentences)
    losses_at = LossesAt(loaded)
    for batch, input_ids, mask in _padded_batches(loaded, ids, batch_size, "GRUEN masked LM"):
        rows, cols = mask.nonzero(as_tuple=True)
        losses = losses_at(input_ids, mask, rows, cols, input_ids[rows, cols])
        totals = torch.zeros(len(batch), dtype=losses.dtype, device=losses.device).index_add_(0, rows, losses)
        for row, index in enumerate(batch):
            scores[index] = math.exp(totals[row].item() / len(ids[index]))
    return scores


@torch.inference_mode()
def pll_nll_scores(loaded: LoadedModel, sentences: Sequence[str], batch_size: int) -> list[float]:
    """Mean negative pseudo-log-likelihood per token of each sentence (every word piece masked once)."""
    ids, special = encode_single(loaded, sentences, what="masked LM")
    mask_id = loaded.tokenizer.mask_token_id
    if mask_id is None:
        raise ValueError("lm_scoring='pll' needs a masked LM whose tokenizer has a mask token")
    copies = [(s, pos) for s, flags in enumerate(special) for pos, flag in enumerate(flags) if not flag]
    device = loaded.model.device
    pad_id = loaded.tokenizer.pad_token_id or 0
    totals = [0.0] * len(sentences)
    counts = [0] * len(sentences)
    losses_at = LossesAt(loaded)
    batches = list(length_sorted_batches([len(ids[s]) for s, _ in copies], batch_size))
    for batch in progress(batches, len(batches), "GRUEN pseudo-log-likelihood"):
        owners = [copies[i][0] for i in batch]
        input_ids, mask = pad_batch([ids[s] for s in owners], pad_id, device)
        rows = torch.arange(len(batch), device=device)
        cols = torch.tensor([copies[i][1] for i in batch], device=device)
        targets = input_ids[rows, cols].clone()
        input_ids[rows, cols] = mask_id
        losses = losses_at(input_ids, mask, rows, cols, targets).tolist()
        for owner, loss in zip(owners, losses, strict=True):
            totals[owner] += loss
            counts[owner] += 1
    return [total / count if count else 0.0 for total, count in zip(totals, counts, strict=True)]


@torch.inference_mode()
def cola_scores(loaded: LoadedModel, sentences: Sequence[str], batch_size: int) -> list[float]:
    """Raw class-1 ("acceptable") logit of each sentence, as released (not a probability)."""
    ids, _ = encode_single(loaded, sentences, max_length=COLA_MAX_LENGTH, what="CoLA classifier")
    scores = [0.0] * len(sentences)
    fast = loaded.classifier_fast_path  # a plain BERT classifier: fused, packed, [CLS]-only last layer
    for batch, input_ids, mask in _padded_batches(loaded, ids, batch_size, "GRUEN CoLA"):
        if fast is not None:
            logits = fast(input_ids, mask)
        else:
            logits = loaded.model(input_ids=input_ids, attention_mask=mask).logits
        logits = logits[:, 1].float().tolist()
        for index, logit in zip(batch, logits, strict=True):
            scores[index] = logit
    return scores


def lm_term(lm_value: float) -> float:
    """``exp(-0.5 * x)``: the release's map from the LM value (lower is better) to a bonus."""
    return math.exp(-0.5 * lm_value)


def grammaticality_score(lm_value: float, cola_logit: float) -> float:
    """The release's combination and rescaling of the two terms."""
    return max(0.0, (lm_term(lm_value) + cola_logit) / 8.0 + 0.5)
