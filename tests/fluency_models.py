"""A tiny fluency reader (with its fusion constants) built on the fly, so no test needs the shipped one."""

from __future__ import annotations

import pathlib

import torch
from transformers import BertForSequenceClassification

from story_quality.fluency.fusion import Fusion, PartScale, Regime
from story_quality.fluency.reader import ID2LABEL, mark_as_reader
from tests import tiny_models


def save_fluency_reader(
    directory: pathlib.Path,
    union_checkpoint: str | None = None,
    seed: int = 0,
    weights: tuple[float, float] = (0.6, 0.4),
    long_weights: tuple[float, float] = (1.0, 0.0),
) -> pathlib.Path:
    """A random two-class BERT marked as a fluency reader, its tokenizer, and a ``fusion.json``
    whose UNION part is ``union_checkpoint`` (a tiny one when None): ``weights`` for stories of at
    most 40 words, ``long_weights`` for longer ones."""
    torch.manual_seed(seed)
    tok = tiny_models.tokenizer(lowercase=True, model_max_length=64)
    config = tiny_models.bert_config(
        len(tok),
        num_labels=2,
        id2label=dict(ID2LABEL),
        label2id={name: i for i, name in ID2LABEL.items()},
        initializer_range=0.5,
    )
    mark_as_reader(config, 32)
    BertForSequenceClassification(config).eval().save_pretrained(directory)
    tok.save_pretrained(directory)
    if union_checkpoint is None:
        union_checkpoint = str(
            tiny_models.save_union_checkpoint(directory.parent / f"{directory.name}-union", seed=seed)
        )
    Fusion(
        {"union": PartScale(0.5, 0.2), "fluency": PartScale(-0.2, 0.7)},
        (
            Regime(40, {"union": weights[0], "fluency": weights[1]}),
            Regime(None, {"union": long_weights[0], "fluency": long_weights[1]}),
        ),
        union_checkpoint,
    ).write(directory)
    return directory
