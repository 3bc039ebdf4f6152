"""Tiny GRUEN checkpoints built on the fly (masked LM, CoLA classifier, ALBERT sentence order),
shared by the GRUEN test files, plus checks that the builders give what the metric expects."""

from __future__ import annotations

import hashlib
import pathlib

import torch
from tiny_models import bert_config, save_masked_lm, tokenizer
from transformers import (
    AlbertConfig,
    AlbertForPreTraining,
    AutoModelForPreTraining,
    AutoTokenizer,
    BertForSequenceClassification,
)

MAX_LENGTH = 64


def save_cola(directory: pathlib.Path, seed: int = 1) -> pathlib.Path:
    """A random cased two-class BERT classifier (class 1 = acceptable), as a CoLA checkpoint."""
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=False, model_max_length=MAX_LENGTH)
    config = bert_config(len(tok), num_labels=2, id2label={0: "unacceptable", 1: "acceptable"})
    BertForSequenceClassification(config).eval().save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_sop(directory: pathlib.Path, seed: int = 2) -> pathlib.Path:
    """A random ALBERT pre-training model (sentence-order head) saved with a BERT WordPiece tokenizer."""
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=False, model_max_length=MAX_LENGTH)
    config = AlbertConfig(
        vocab_size=len(tok),
        embedding_size=16,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH,
        pad_token_id=tok.pad_token_id,
    )
    AlbertForPreTraining(config).eval().save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_all(root: pathlib.Path) -> dict[str, str]:
    """The three tiny checkpoints under ``root``, as compute() keyword arguments."""
    return {
        "lm_model": str(save_masked_lm(root / "lm", max_length=MAX_LENGTH, lowercase=False)),
        "cola_model": str(save_cola(root / "cola")),
        "sop_model": str(save_sop(root / "sop")),
    }


def directory_digest(directory: pathlib.Path) -> dict[str, str]:
    """Every file under ``directory`` with its SHA-256, to show that loading wrote nothing."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_tiny_sop_model_loads_with_its_wordpiece_tokenizer(tmp_path):
    path = save_sop(tmp_path / "sop")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForPreTraining.from_pretrained(path, use_safetensors=True)
    enc = tok("The dog went home.", "He was happy.", return_tensors="pt")
    assert model(**enc).sop_logits.shape == (1, 2)
    assert (tmp_path / "sop" / "model.safetensors").exists()
