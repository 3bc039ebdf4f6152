"""Tiny GRUEN checkpoints built on the fly (masked LM, CoLA classifier, ALBERT sentence order),
shared by the GRUEN test files (``gruen/test_tiny_models.py`` checks what the builders give).

Random tiny models make every GRUEN term but redundancy vanish or saturate (a random LM has a
perplexity near its vocabulary size, so ``exp(-0.5 * lm)`` is 1e-77; random CoLA logits are all
alike; a random sentence-order head costs ``log 2`` per split point, which clips every final
score with coherence to 0). The builders below shape a few weights so that each term stays in
the range where a wrong constant or a mix-up moves the final score by far more than the tests'
tolerance: ``test_every_term_of_the_tiny_models_is_large_enough_to_matter`` checks it.
"""

from __future__ import annotations

import hashlib
import pathlib

import numpy as np
import torch
from scipy.optimize import linprog
from tiny_models import bert_config, tokenizer
from transformers import (
    AlbertConfig,
    AlbertForPreTraining,
    BertForMaskedLM,
    BertForSequenceClassification,
)

MAX_LENGTH = 64
HIDDEN = 32  # tiny_models.bert_config's hidden size


def save_fluent_lm(directory: pathlib.Path, seed: int = 0, sharpness: float = 0.2) -> pathlib.Path:
    """A cased masked LM that mostly copies its (unmasked) input: a low, varied perplexity.

    Word embeddings ~ N(0, 1) dominate the small-initialised layers through the residual
    connections, and the head's transform is the identity, so each position's logits are
    ``sharpness`` x (its own embedding . every embedding) plus noise from the context: the
    release's ``lm`` value comes out near 4 (3.5 to 5 over the test sentences), where
    ``exp(-0.5 * lm)`` is about 0.1 instead of 1e-77.
    """
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=False, model_max_length=MAX_LENGTH)
    model = BertForMaskedLM(bert_config(len(tok), max_position_embeddings=MAX_LENGTH)).eval()
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight.normal_(0.0, 1.0)
        transform = model.cls.predictions.transform
        transform.dense.weight.copy_(torch.eye(HIDDEN))
        transform.dense.bias.zero_()
        transform.LayerNorm.weight.fill_(sharpness)
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_cola(directory: pathlib.Path, seed: int = 1) -> pathlib.Path:
    """A cased two-class BERT classifier (class 1 = acceptable) whose logits differ from sentence to sentence.

    Spread weights (``initializer_range`` 0.5) give class-1 logits about 3 +- 2 over the test
    sentences; the class-1 bias is lowered by 3 so that they straddle 0 and the
    grammaticality term ``(lm_term + cola) / 8 + 0.5`` stays inside [0, 1].
    """
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=False, model_max_length=MAX_LENGTH)
    config = bert_config(
        len(tok),
        num_labels=2,
        id2label={0: "unacceptable", 1: "acceptable"},
        initializer_range=0.5,
        max_position_embeddings=MAX_LENGTH,
    )
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():
        model.classifier.bias[1] -= 3.0
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_sop(directory: pathlib.Path, seed: int = 2) -> pathlib.Path:
    """An ALBERT pre-training model (sentence-order head) saved with a BERT WordPiece tokenizer.

    Its sentence-order logits vary with the split point (``initializer_range`` 0.2), and the
    "original order" class gets a bias of +2.5, so the SOP loss is about 0.1 to 0.4 rather
    than ``log 2``: with coherence on, the final score is not clipped to 0.
    """
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=False, model_max_length=MAX_LENGTH)
    config = AlbertConfig(
        vocab_size=len(tok),
        embedding_size=16,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=MAX_LENGTH,
        pad_token_id=tok.pad_token_id,
        initializer_range=0.2,
    )
    model = AlbertForPreTraining(config).eval()
    with torch.no_grad():
        model.sop_classifier.classifier.bias[0] += 2.5
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_all(root: pathlib.Path) -> dict[str, str]:
    """The three tiny checkpoints under ``root``, as compute() keyword arguments."""
    return {
        "lm_model": str(save_fluent_lm(root / "lm")),
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


def wmd_by_linear_programming(a_ids, b_ids, embeddings):
    """The transport problem written out in full and handed to a generic LP solver."""
    a_vocab, b_vocab = sorted(set(a_ids)), sorted(set(b_ids))
    a_w = np.array([a_ids.count(i) / len(a_ids) for i in a_vocab])
    b_w = np.array([b_ids.count(i) / len(b_ids) for i in b_vocab])
    vec = embeddings.double().numpy()
    cost = np.array(
        [
            [
                max(0.0, 1 - vec[i] @ vec[j] / np.linalg.norm(vec[i]) / np.linalg.norm(vec[j]))
                if i != j
                else 0.0
                for j in b_vocab
            ]
            for i in a_vocab
        ]
    )
    n, m = cost.shape
    rows = [np.kron(np.eye(n)[k], np.ones(m)) for k in range(n)]
    cols = [np.kron(np.ones(n), np.eye(m)[k]) for k in range(m)]
    result = linprog(
        cost.ravel(), A_eq=np.array(rows + cols), b_eq=np.concatenate([a_w, b_w]), bounds=(0, None)
    )
    return result.fun
