"""A small encoder cut from a pretrained one: the same word pieces for kept words, the same encoder outputs."""

from __future__ import annotations

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from story_quality.fluency.reader import ID2LABEL
from story_quality.training.small_encoder import small_classifier
from tests import tiny_models

TEXTS = ["the dog went home and was happy .", "she saw the old cat at school ."] * 3


def test_kept_words_split_alike_and_the_encoder_gives_the_first_layers_outputs(tmp_path):
    source = tiny_models.save_union_checkpoint(tmp_path / "source")
    model, tokenizer = small_classifier(
        str(source), TEXTS, layers=1, min_count=1, id2label=ID2LABEL, max_length=16
    )
    full_tokenizer = AutoTokenizer.from_pretrained(source)
    full = AutoModelForSequenceClassification.from_pretrained(source, num_hidden_layers=1).eval()
    assert len(tokenizer) < len(full_tokenizer) and model.config.vocab_size == len(tokenizer)
    assert model.config.max_position_embeddings == 16 and model.config.num_hidden_layers == 1
    model.eval()
    for text in TEXTS[:2]:
        small_ids, full_ids = tokenizer(text, return_tensors="pt"), full_tokenizer(text, return_tensors="pt")
        assert tokenizer.convert_ids_to_tokens(
            small_ids["input_ids"][0]
        ) == full_tokenizer.convert_ids_to_tokens(full_ids["input_ids"][0])
        with torch.no_grad():
            torch.testing.assert_close(
                model.base_model(**small_ids).last_hidden_state, full.base_model(**full_ids).last_hidden_state
            )
    # a word the texts never use still splits into kept characters, not [UNK]
    assert tokenizer.unk_token not in tokenizer.tokenize("zebra")
