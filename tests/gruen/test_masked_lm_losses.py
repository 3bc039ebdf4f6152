"""The masked LM's losses at chosen positions, in a reused buffer, equal ``F.cross_entropy`` bit for bit."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import transformers
from tiny_models import bert_config

from story_quality.batching import pad_batch
from story_quality.bert_forward.onednn_products import onednn_products
from story_quality.gruen import grammaticality
from story_quality.gruen.grammaticality import LossesAt
from story_quality.gruen.loading import LoadedModel

CHUNK, MIN_ROWS = 16, 12  # chunks of 16 positions; chunks of 12 and more multiply column-major


def rows_of(*lengths: int) -> list[list[int]]:
    return [[2] + [4 + (n * 5 + i) % 50 for i in range(n - 2)] + [3] for n in lengths]


BATCHES = [  # three batches: 24 positions (a column-major chunk and a small one), then 3, then 20
    rows_of(8, 7, 9),
    rows_of(3),
    rows_of(10, 10),
]


def masked_lm(kind: str) -> torch.nn.Module:
    torch.manual_seed(3)
    if kind == "bert":
        return transformers.BertForMaskedLM(bert_config(vocab_size=60, initializer_range=0.5)).eval()
    config = transformers.RobertaConfig(
        vocab_size=60, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=40, pad_token_id=0,
    )  # fmt: skip
    return transformers.RobertaForMaskedLM(config).eval()


def expected_losses(model, input_ids, mask, rows, cols, targets, chunk: int) -> torch.Tensor:
    """What the head computed before the buffer: ``F.cross_entropy(head(h))`` chunk by chunk, on the
    encoder states ``LossesAt`` reads (a BERT's through its packed layers: tests/bert_forward/test_packed_layers.py)."""
    encoder, head = grammaticality.split_masked_lm(model)
    losses_at = LossesAt(LoadedModel(tokenizer=None, model=model, window=40))
    hidden = losses_at._hidden_at(encoder, input_ids, mask, rows, cols)
    pieces = [
        F.cross_entropy(head(hidden[s : s + chunk]), targets[s : s + chunk], reduction="none")
        for s in range(0, len(hidden), chunk)
    ]
    return torch.cat(pieces)


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_losses_equal_the_cross_entropy_of_the_head_bit_for_bit(kind, monkeypatch):
    monkeypatch.setattr(grammaticality, "HEAD_CHUNK", CHUNK)
    monkeypatch.setattr(grammaticality, "MIN_ROWS", MIN_ROWS)
    model = masked_lm(kind)
    losses_at = LossesAt(LoadedModel(tokenizer=None, model=model, window=40))
    buffers: dict[str, set[int]] = {}
    with torch.inference_mode():
        for rows_of_ids in BATCHES:
            input_ids, mask = pad_batch(rows_of_ids, 0, torch.device("cpu"))
            rows, cols = mask.nonzero(as_tuple=True)
            targets = input_ids[rows, cols].flip(0)  # targets that differ from the inputs too
            got = losses_at(input_ids, mask, rows, cols, targets)
            assert torch.equal(got, expected_losses(model, input_ids, mask, rows, cols, targets, CHUNK))
            for name, buffer in losses_at._buffers.items():
                buffers.setdefault(name, set()).add(buffer.data_ptr())
    # BERT's head writes every batch's logits (and the column-major products) into one buffer each;
    # other heads use none.
    assert set(buffers) == ({"logits", "columns"} if kind == "bert" else set())
    assert all(len(pointers) == 1 for pointers in buffers.values())


def test_onednn_head_pieces_keep_two_rows_or_more():
    """A piece of one row would be oneDNN's matrix-vector product, whose bits differ: pieces of at
    most N positions have at least N // 2 (exact_products.row_slices)."""
    assert grammaticality.ONEDNN_HEAD_POSITIONS >= 4


def test_under_onednn_the_losses_equal_the_cross_entropy_of_the_head_bit_for_bit(monkeypatch, onednn_calls):
    """In pieces of at most ``ONEDNN_HEAD_POSITIONS`` positions (here 6, so a chunk of 16 takes
    three pieces), oneDNN's vocabulary products, in no buffer."""
    monkeypatch.setattr(grammaticality, "HEAD_CHUNK", CHUNK)
    monkeypatch.setattr(grammaticality, "ONEDNN_HEAD_POSITIONS", 6)
    model = masked_lm("bert")
    vocabulary = model.config.vocab_size
    losses_at = LossesAt(LoadedModel(tokenizer=None, model=model, window=40))
    pieces: list[int] = []
    with torch.inference_mode(), onednn_products():
        for rows_of_ids in BATCHES:
            input_ids, mask = pad_batch(rows_of_ids, 0, torch.device("cpu"))
            rows, cols = mask.nonzero(as_tuple=True)
            targets = input_ids[rows, cols].flip(0)
            del onednn_calls[:]
            got = losses_at(input_ids, mask, rows, cols, targets)
            pieces += [n for n, outputs in onednn_calls if outputs == vocabulary]
            assert torch.equal(got, expected_losses(model, input_ids, mask, rows, cols, targets, CHUNK))
    assert pieces == [5, 5, 6, 4, 4, 3, 5, 5, 6, 4]  # chunks of 16, 8; 3; 16, 4
    assert losses_at._buffers == {}


def test_autocast_takes_the_plain_head():
    model = masked_lm("bert")
    losses_at = LossesAt(LoadedModel(tokenizer=None, model=model, window=40))
    input_ids, mask = pad_batch(BATCHES[0], 0, torch.device("cpu"))
    rows, cols = mask.nonzero(as_tuple=True)
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        got = losses_at(input_ids, mask, rows, cols, input_ids[rows, cols])
        expected = expected_losses(model, input_ids, mask, rows, cols, input_ids[rows, cols], 1024)
    assert losses_at._buffers == {}
    torch.testing.assert_close(got, expected.float())
