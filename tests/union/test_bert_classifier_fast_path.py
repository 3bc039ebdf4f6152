"""The lean BERT forward equals the model's own forward, logits for logits."""

from __future__ import annotations

import pytest
import torch
import transformers
from tiny_models import bert_config

from story_quality.batching import pad_batch
from story_quality.union.bert_classifier_fast_path import BertClassifierFastPath, supports_fast_path


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
