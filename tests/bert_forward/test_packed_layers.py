"""BERT's packed encoder layers: bit for bit the padded layers, and the model's forward to rounding."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import transformers
from tiny_models import bert_config

from story_quality.batching import pad_batch
from story_quality.bert_forward import onednn_products, packed_layers
from story_quality.bert_forward.onednn_products import onednn_refusal
from story_quality.bert_forward.packed_layers import (
    PACK_MIN_TOKENS,
    BertLayers,
    last_hidden_rows,
    supports_bert_layers,
)
from story_quality.precision import autocast


def token_rows(lengths: list[int]) -> list[list[int]]:
    """Token rows of these lengths ([CLS] ... [SEP]), word ids varying with the row."""
    return [[2] + [4 + (row * 7 + i) % 40 for i in range(n - 2)] + [3] for row, n in enumerate(lengths)]


def encoder(hidden_act: str = "gelu") -> transformers.BertModel:
    torch.manual_seed(4)
    config = bert_config(vocab_size=50, seed_layers=3, initializer_range=0.5, hidden_act=hidden_act)
    return transformers.BertModel(config, add_pooling_layer=False).eval()


@pytest.mark.parametrize(
    "lengths", [[31, 25, 17, 12, 9, 5, 3, 2], [20, 20, 20, 20], [64], [40, 24], [60, 55, 50, 40, 30]]
)
@pytest.mark.parametrize("hidden_act", ["gelu", "relu"])
@pytest.mark.parametrize("arithmetic", ["fp32", "fp32-onednn"])
def test_packed_layers_equal_the_padded_layers_bit_for_bit(lengths, hidden_act, arithmetic, monkeypatch):
    """In torch's BLAS and in oneDNN's products (``precision="fp32-onednn"``) alike; the last batch
    (235 tokens) runs its projections and feed-forward in slices, as a batch of over 1,024 tokens does."""
    if arithmetic == "fp32-onednn" and onednn_refusal(torch.device("cpu")):
        pytest.skip("torch without oneDNN")
    monkeypatch.setattr(packed_layers, "SLICE_ROWS", 2 * PACK_MIN_TOKENS)
    if sum(lengths) > 2 * PACK_MIN_TOKENS:
        assert len(packed_layers.product_slices(sum(lengths))) == 2
    layers = BertLayers(encoder(hidden_act))
    input_ids, mask = pad_batch(token_rows(lengths), 0, torch.device("cpu"))
    real = mask.bool()
    keep = real[:, None, None, :]
    with torch.inference_mode(), autocast(arithmetic, torch.device("cpu")):
        embedded = layers.bert.embeddings(input_ids=input_ids)
        padded = layers.padded(embedded, keep, 3)[real]
        batch = layers.packed_batch(real, embedded.dtype)
        packed = layers.packed(batch.pack(embedded), batch, keep, 3)
        chosen = last_hidden_rows(layers, input_ids, mask)
    assert torch.equal(packed, padded)
    assert torch.equal(chosen, packed)
    assert not torch.equal(packed[0], packed[1]), "rows must differ for the check to mean something"


@pytest.mark.parametrize(
    ("lengths", "packed", "autocast"),
    [([31, 25, 17, 12, 9, 5, 3, 2], True, False), ([5, 3], False, False), ([31, 25, 17, 12, 9], False, True)],
)
def test_last_hidden_rows_equal_the_model_forward(lengths, packed, autocast, monkeypatch):
    """Packed (104 real tokens), padded (8, under the packing threshold) or in bf16 autocast, the
    states are the model's own, row after row in the order of the mask's real tokens."""
    model = encoder()
    input_ids, mask = pad_batch(token_rows(lengths), 0, torch.device("cpu"))
    runs: list[int] = []
    packed_layers = BertLayers.packed
    monkeypatch.setattr(BertLayers, "packed", lambda *args: runs.append(1) or packed_layers(*args))
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        expected = model(input_ids=input_ids, attention_mask=mask).last_hidden_state[mask.bool()]
        got = last_hidden_rows(BertLayers(model), input_ids, mask)
    assert bool(runs) == packed
    tolerance = 3e-2 if autocast else 1e-5  # bf16 keeps 8 bits of mantissa
    torch.testing.assert_close(got.float(), expected.float(), atol=tolerance, rtol=tolerance)


@pytest.mark.parametrize(
    "changed",
    [
        {"position_embedding_type": "relative_key"},
        {"is_decoder": True},
        {"is_decoder": True, "add_cross_attention": True},
    ],
)
def test_only_plain_bert_encoders_take_the_layers(changed):
    assert supports_bert_layers(encoder())
    other = transformers.BertModel(bert_config(vocab_size=50, **changed))
    assert not supports_bert_layers(other)
    assert not supports_bert_layers(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="not a plain BERT encoder"):
        BertLayers(other)


@pytest.mark.parametrize("rows", [1, 63, 64, 1023, 1024, 1025, 2048, 2049, 3600, 10_000])
def test_product_slices_cover_the_rows_in_the_fewest_slices_none_too_small(rows):
    slices = packed_layers.product_slices(rows)
    assert [s.start for s in slices[1:]] == [s.stop for s in slices[:-1]]
    assert (slices[0].start, slices[-1].stop) == (0, rows)
    sizes = [s.stop - s.start for s in slices]
    assert max(sizes) <= packed_layers.SLICE_ROWS
    assert len(slices) == -(-rows // packed_layers.SLICE_ROWS)
    assert min(sizes) >= min(rows, PACK_MIN_TOKENS)


def test_the_product_slices_are_wide_enough_to_stay_exact():
    """Slices of at least half of SLICE_ROWS: half must not fall under the packing threshold."""
    assert packed_layers.SLICE_ROWS >= 2 * PACK_MIN_TOKENS


def test_under_onednn_the_packed_layers_calls_skip_the_modes_python(onednn_calls, monkeypatch):
    """Their products still go to oneDNN (four a layer), while none of their torch calls, down to a
    tensor's shape, is handed to the mode's Python first; outside them the mode is still on."""
    handed = []
    real = onednn_products._OneDNNLinear.__torch_function__

    def counting(self, func, types, args=(), kwargs=None):
        handed.append(func)
        return real(self, func, types, args, kwargs)

    monkeypatch.setattr(onednn_products._OneDNNLinear, "__torch_function__", counting)
    layers = BertLayers(encoder())
    input_ids, mask = pad_batch(token_rows([31, 25, 17, 12]), 0, torch.device("cpu"))
    real_tokens = mask.bool()
    with torch.inference_mode(), autocast("fp32-onednn", torch.device("cpu")):
        embedded = layers.bert.embeddings(input_ids=input_ids)
        batch = layers.packed_batch(real_tokens, embedded.dtype)
        rows, keep = batch.pack(embedded), real_tokens[:, None, None, :]
        assert handed, "the mode must be on for the check to mean something"
        handed.clear()
        layers.packed(rows, batch, keep, 3)
        assert handed == []
        embedded.add(1)
        assert handed != []
    assert onednn_calls == [(85, 3 * 32), (85, 32), (85, 64), (85, 32)] * 3


@pytest.mark.parametrize("shape", [(4, 7), (3, 33), (2, 130)])
def test_attention_gives_the_bits_of_a_boolean_mask(shape):
    """The additive mask the layers pass is the boolean one's meaning, bit for bit: a masked key
    takes no weight, and every other one its own."""
    batch, length = shape
    torch.manual_seed(length)
    query, key, value = (torch.randn(batch, 4, length, 8) for _ in range(3))
    keep = torch.ones(batch, 1, 1, length, dtype=torch.bool)
    keep[0, ..., length // 2 :] = False
    layers = BertLayers(encoder())
    context = layers.attend(query, key, value, keep)
    expected = F.scaled_dot_product_attention(query, key, value, attn_mask=keep).transpose(1, 2)
    assert torch.equal(context, expected)
    value[0, :, length // 2 :] = 1e6  # what a masked key holds does not reach the context
    assert torch.equal(layers.attend(query, key, value, keep), context)
