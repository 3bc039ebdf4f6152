"""BERT-base-sized checkpoints with random weights, saved with a real WordPiece tokenizer: what the
speed benchmarks and the experiments beside them time (the arithmetic of a real checkpoint of that
size, with no download)."""

from __future__ import annotations

from pathlib import Path

import torch


def gruen_models(root: Path, tokenizer_source: str) -> dict[str, str]:
    """BERT-base-sized masked LM and CoLA classifier with random weights (safetensors)."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertForSequenceClassification

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(tokenizer_source)
    config = BertConfig(vocab_size=len(tok))  # bert-base: 12 layers, 768 hidden, 512 positions
    paths = {"lm_model": root / "lm", "cola_model": root / "cola"}
    BertForMaskedLM(config).eval().save_pretrained(paths["lm_model"])
    BertForSequenceClassification(BertConfig(vocab_size=len(tok), num_labels=2)).eval().save_pretrained(
        paths["cola_model"]
    )
    for path in paths.values():
        tok.save_pretrained(path)
    return {key: str(value) for key, value in paths.items()}
