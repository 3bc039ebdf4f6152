"""The lean BERT forward equals the model's own forward, logits for logits."""

from __future__ import annotations

import pytest
import torch
import transformers
from tiny_models import bert_config

from story_quality.batching import pad_batch
from story_quality.bert_forward import packed_layers
from story_quality.bert_forward.classifier import (
    PACK_MIN_TOKENS,
    BertClassifierFastPath,
    supports_fast_path,
)
from story_quality.bert_forward.onednn_products import onednn_refusal
from story_quality.bert_forward.packed_layers import packs
from story_quality.precision import autocast


@pytest.fixture
def model() -> transformers.BertForSequenceClassification:
    torch.manual_seed(1)
    config = bert_config(vocab_size=50, seed_layers=3, num_labels=2, initializer_range=0.5)
    return transformers.BertForSequenceClassification(config).eval()


def test_logits_equal_the_model_forward_on_a_padded_batch(model):
    rows = [[2, 7, 9, 11, 3], [2, 8, 3], [2, 5, 6, 7, 8, 9, 10, 3], [2, 3]]
    input_ids, attention_mask = pad_batch(rows, pad_id=0, device=torch.device("cpu"))
    with torch.inference_mode():
        expected = model(input_ids=input_ids, attention_mask=attention_mask).logits
        got = BertClassifierFastPath(model)(input_ids, attention_mask)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(expected[0], expected[1]), "rows must differ for the check to mean something"


def test_padding_does_not_change_a_row(model):
    fast = BertClassifierFastPath(model)
    alone = pad_batch([[2, 7, 9, 3]], 0, torch.device("cpu"))
    padded = pad_batch([[2, 7, 9, 3], [2, 4, 5, 6, 7, 8, 9, 10, 11, 3]], 0, torch.device("cpu"))
    with torch.inference_mode():
        torch.testing.assert_close(
            fast(*alone)[0],
            fast(*padded)[0],
            atol=1e-5,
            rtol=1e-5,
        )


def story_rows(lengths: list[int]) -> list[list[int]]:
    """Token rows of these lengths ([CLS] ... [SEP]), word ids varying with the row."""
    return [[2] + [4 + (row * 7 + i) % 40 for i in range(n - 2)] + [3] for row, n in enumerate(lengths)]


ROWS = story_rows([31, 25, 17, 12, 9, 5, 3, 2])  # 104 real tokens in a 8 x 31 batch


@pytest.mark.parametrize("rows", [ROWS, story_rows([20, 20, 20, 20]), story_rows([64]), story_rows([40, 24])])
@pytest.mark.parametrize("hidden_act", ["gelu", "relu"])
def test_packed_layers_equal_the_padded_layers_bit_for_bit(rows, hidden_act):
    """The CPU's packed layout (no padding, reused buffers, GELU in place) is exact: the logits
    equal the padded path's, which runs the model's own modules, bit for bit."""
    torch.manual_seed(2)
    config = bert_config(
        vocab_size=50, seed_layers=3, num_labels=2, initializer_range=0.5, hidden_act=hidden_act
    )
    fast = BertClassifierFastPath(transformers.BertForSequenceClassification(config).eval())
    input_ids, attention_mask = pad_batch(rows, pad_id=0, device=torch.device("cpu"))
    with torch.inference_mode():
        padded = fast(input_ids, attention_mask, packed=False)
        packed = fast(input_ids, attention_mask, packed=True)
        chosen = fast(input_ids, attention_mask)
    assert torch.equal(packed, padded)
    assert torch.equal(chosen, packed)
    if len(rows) > 1:
        assert not torch.equal(padded[0], padded[1]), "rows must differ for the check to mean something"


@pytest.mark.parametrize("arithmetic", ["fp32", "fp32-onednn"])
def test_projections_in_slices_keep_the_logits_bit_for_bit(arithmetic, monkeypatch):
    """235 real tokens in slices of at most 128 rows: every projection, the last layer's keys and
    values included, runs in two slices, in torch's BLAS and in oneDNN alike."""
    if arithmetic == "fp32-onednn" and onednn_refusal(torch.device("cpu")):
        pytest.skip("torch without oneDNN")
    monkeypatch.setattr(packed_layers, "SLICE_ROWS", 2 * PACK_MIN_TOKENS)
    rows = story_rows([60, 55, 50, 40, 30])
    assert len(packed_layers.product_slices(sum(map(len, rows)))) == 2
    torch.manual_seed(2)
    config = bert_config(vocab_size=50, seed_layers=3, num_labels=2, initializer_range=0.5)
    fast = BertClassifierFastPath(transformers.BertForSequenceClassification(config).eval())
    input_ids, attention_mask = pad_batch(rows, pad_id=0, device=torch.device("cpu"))
    with torch.inference_mode(), autocast(arithmetic, torch.device("cpu")):
        padded = fast(input_ids, attention_mask, packed=False)
        packed = fast(input_ids, attention_mask, packed=True)
    assert torch.equal(packed, padded)
    assert not torch.equal(padded[0], padded[1]), "rows must differ for the check to mean something"


def test_only_cpu_batches_of_enough_tokens_pack():
    """Matrix products of few rows round differently, so small batches keep the padded layout; so
    do GPUs and autocast."""
    enough = pad_batch(story_rows([PACK_MIN_TOKENS - 10, 10]), 0, torch.device("cpu"))[1]
    short = pad_batch(story_rows([PACK_MIN_TOKENS - 11, 10]), 0, torch.device("cpu"))[1]
    assert packs(enough, torch.float32)
    assert not packs(short, torch.float32)
    assert not packs(enough, torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not packs(enough, torch.float32)
    assert not packs(enough.to("meta"), torch.float32)


def test_packed_buffers_are_reused_across_layers(model, monkeypatch):
    """Every layer's matrix products write into the batch's buffers, not into fresh tensors."""
    fast = BertClassifierFastPath(model)
    targets: list[int] = []
    addmm = torch.addmm

    def recording_addmm(*args, **kwargs):
        if "out" in kwargs:
            targets.append(kwargs["out"].untyped_storage().data_ptr())
        return addmm(*args, **kwargs)

    monkeypatch.setattr(torch, "addmm", recording_addmm)
    input_ids, attention_mask = pad_batch(ROWS, pad_id=0, device=torch.device("cpu"))
    with torch.inference_mode():
        fast(input_ids, attention_mask, packed=True)
    layers = model.config.num_hidden_layers
    assert len(targets) == 4 * (layers - 1) + 1  # q/k/v, attention output, feed-forward in and out; last k/v
    assert len(set(targets)) == 3  # the fused projection's, the width d one's, the feed-forward's


def test_padding_rows_stay_zero_whatever_memory_the_allocator_hands_back(model, monkeypatch):
    """The padded keys and values must be zeros, not whatever a fresh buffer holds: garbage gets zero
    attention weight, but NaN garbage would not (0 x NaN). Every ``torch.empty`` here hands back NaNs."""
    input_ids, attention_mask = pad_batch(ROWS, pad_id=0, device=torch.device("cpu"))
    fast = BertClassifierFastPath(model)
    with torch.inference_mode():
        expected = fast(input_ids, attention_mask, packed=False)
    empty = torch.empty

    def dirty_empty(*args, **kwargs):
        return empty(*args, **kwargs).fill_(float("nan"))

    monkeypatch.setattr(torch, "empty", dirty_empty)
    with torch.inference_mode():
        packed = fast(input_ids, attention_mask, packed=True)
    assert torch.equal(packed, expected)


def test_other_configurations_use_the_model_forward():
    config = bert_config(vocab_size=50, num_labels=2, position_embedding_type="relative_key")
    assert not supports_fast_path(transformers.BertForSequenceClassification(config))
    assert not supports_fast_path(
        transformers.DistilBertForSequenceClassification(
            transformers.DistilBertConfig(vocab_size=50, dim=32, n_layers=1, n_heads=2, hidden_dim=64)
        )
    )
    with pytest.raises(ValueError, match="not a plain BERT classifier"):
        BertClassifierFastPath(transformers.BertForSequenceClassification(config))
