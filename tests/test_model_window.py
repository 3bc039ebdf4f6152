"""The positions an encoder reads (BERT all it declares, RoBERTa-style encoders two fewer) and a model's window."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from transformers import BertConfig, MPNetConfig, PretrainedConfig, RobertaConfig

from story_quality.model_window import model_window, usable_positions


def test_bert_reads_every_position_it_declares():
    assert usable_positions(BertConfig(max_position_embeddings=512)) == 512


def test_roberta_style_encoders_start_counting_after_their_padding_index():
    assert usable_positions(RobertaConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    assert usable_positions(MPNetConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    assert usable_positions(RobertaConfig(max_position_embeddings=40, pad_token_id=3)) == 36


def test_a_config_without_positions_has_no_limit():
    assert usable_positions(PretrainedConfig()) is None


def test_the_window_is_the_smallest_of_the_callers_the_tokenizers_and_the_positions():
    mpnet = MPNetConfig(max_position_embeddings=514, pad_token_id=1)
    unset = SimpleNamespace(model_max_length=int(1e30))  # a tokenizer that records no limit
    assert model_window(unset, mpnet) == 512
    assert model_window(SimpleNamespace(model_max_length=256), mpnet) == 256
    assert model_window(SimpleNamespace(model_max_length=256), mpnet, max_length=100) == 100
    assert model_window(SimpleNamespace(model_max_length=256), BertConfig(max_position_embeddings=128)) == 128
    assert model_window(unset, PretrainedConfig(), max_length=64) == 64
    with pytest.raises(ValueError, match="Cannot tell the model's window: pass max_length"):
        model_window(unset, PretrainedConfig())
