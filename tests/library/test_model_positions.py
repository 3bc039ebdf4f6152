"""The positions an encoder reads: BERT all it declares, RoBERTa-style encoders two fewer."""

from __future__ import annotations

from transformers import BertConfig, MPNetConfig, PretrainedConfig, RobertaConfig

from story_quality.model_positions import usable_positions


def test_bert_reads_every_position_it_declares():
    assert usable_positions(BertConfig(max_position_embeddings=512)) == 512


def test_roberta_style_encoders_start_counting_after_their_padding_index():
    assert usable_positions(RobertaConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    assert usable_positions(MPNetConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    assert usable_positions(RobertaConfig(max_position_embeddings=40, pad_token_id=3)) == 36


def test_a_config_without_positions_has_no_limit():
    assert usable_positions(PretrainedConfig()) is None
