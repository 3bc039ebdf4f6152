"""Tiny, deterministic checkpoints built on the fly, so no test needs the Hub."""

from __future__ import annotations

import pathlib
import string

import torch
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertTokenizer

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[MALE]", "[FEMALE]", "[NEUTRAL]"]
WORDS = (
    "the a an he she it they i we you was were is are did does do not n't 's went home to of and in on at "
    "for with his her my story dog cat man woman day night school store car house friend friends family "
    "decided wanted liked loved happy sad went go got get came come saw see made make ate eat "
    "played play ran run walked walk found find lost took took bought told said asked then but so "
    "because after before when very good bad new old big small one two three first last time"
).split()

# Short stories, clean and tokenised, one a single sentence: the texts the tiny checkpoints score.
SAMPLE_STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",
    "the dog ran to the school . the cat ate .",
    "Mary didn't like the new car. She sold it to her friend.",
    "I played with my friends after school. We ran and ran. Then we ate.",
    "He was sad.",
    "The old man walked his dog every day. One day the dog found a cat. They became friends.",
    "She ran to the park. She ran home.",
]


def vocabulary(lowercase: bool = True) -> dict[str, int]:
    """WordPiece vocabulary covering every ASCII word (through single characters and ``##`` pieces)."""
    chars = string.ascii_lowercase + string.digits + (string.ascii_uppercase if not lowercase else "")
    pieces = (
        SPECIAL
        + list(dict.fromkeys(WORDS))
        + list(chars)
        + [f"##{c}" for c in chars]
        + list(string.punctuation)
    )
    if not lowercase:
        pieces += [w.capitalize() for w in WORDS]
    return {piece: i for i, piece in enumerate(dict.fromkeys(pieces))}


def tokenizer(lowercase: bool = True, model_max_length: int = 64) -> BertTokenizer:
    tok = BertTokenizer(
        vocab=vocabulary(lowercase), do_lower_case=lowercase, model_max_length=model_max_length
    )
    tok.add_special_tokens({"additional_special_tokens": ["[MALE]", "[FEMALE]", "[NEUTRAL]"]})
    return tok


def bert_config(
    vocab_size: int, seed_layers: int = 2, max_position_embeddings: int = 64, **kwargs
) -> BertConfig:
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=seed_layers,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=max_position_embeddings,
        **kwargs,
    )


UNION_LABELS = {0: "perturbed", 1: "human"}


def save_union_checkpoint(
    directory: pathlib.Path,
    normalization: dict | None = None,
    max_length: int = 64,
    seed: int = 0,
    id2label: dict[int, str] | None = None,
    long_stories: str | None = None,
) -> pathlib.Path:
    """A random two-class BERT with UNION's labels, saved with its tokenizer (safetensors).

    ``id2label`` replaces UNION's ``{0: "perturbed", 1: "human"}`` (the weights depend on
    ``seed`` only, so checkpoints that differ in their label names score alike class by class).
    """
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=True, model_max_length=max_length)
    labels = dict(UNION_LABELS if id2label is None else id2label)
    config = bert_config(
        len(tok),
        max_position_embeddings=max_length,
        num_labels=2,
        id2label=labels,
        label2id={name: i for i, name in labels.items()},
        initializer_range=0.5,  # spread the random scores so order mix-ups cannot hide
    )
    if normalization is not None:
        config.union_normalization = normalization
    if long_stories is not None:
        config.union_long_stories = long_stories
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def save_masked_lm(
    directory: pathlib.Path, max_length: int = 64, seed: int = 0, lowercase: bool = False
) -> pathlib.Path:
    """A random cased BERT masked LM with its tokenizer."""
    torch.manual_seed(seed)
    tok = tokenizer(lowercase=lowercase, model_max_length=max_length)
    BertForMaskedLM(bert_config(len(tok), max_position_embeddings=max_length)).eval().save_pretrained(
        directory
    )
    tok.save_pretrained(directory)
    return directory


def roc_union_checkpoint(tmp_path_factory, max_length: int = 48, name: str = "roc") -> pathlib.Path:
    """A tiny UNION checkpoint normalising as ROCStories, in a new folder of pytest's temporary tree."""
    from story_quality.union.normalization import ROC_STORIES

    return save_union_checkpoint(
        tmp_path_factory.mktemp("union") / name, normalization=ROC_STORIES.to_dict(), max_length=max_length
    )
