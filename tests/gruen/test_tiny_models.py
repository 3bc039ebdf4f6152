"""The tiny GRUEN models the tests build load and run as the real ones do."""

from __future__ import annotations

from gruen_models import save_sop
from transformers import (
    AutoModelForPreTraining,
    AutoTokenizer,
)


def test_tiny_sop_model_loads_with_its_wordpiece_tokenizer(tmp_path):
    path = save_sop(tmp_path / "sop")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForPreTraining.from_pretrained(path, use_safetensors=True)
    enc = tok("The dog went home.", "He was happy.", return_tensors="pt")
    assert model(**enc).sop_logits.shape == (1, 2)
    assert (tmp_path / "sop" / "model.safetensors").exists()
