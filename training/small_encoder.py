"""A pretrained BERT-style encoder made small enough to ship: its first layers, and the word pieces a corpus uses.

The embedding table is most of a small encoder (MiniLM-L6: 11.7M of its 22.7M weights). Keeping
the word pieces the training text uses at least ``min_count`` times (and every ASCII character
and every character the text uses, alone and as a ``##`` suffix, so any word still splits into
known pieces), the positions a sentence of ``max_length`` pieces needs, and the first ``layers``
layers gives a plain ``BertForSequenceClassification`` with its own tokenizer: a word whose
pieces were all kept splits exactly as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertTokenizerFast


def kept_pieces(tokenizer: BertTokenizerFast, texts: Iterable[str], min_count: int) -> list[str]:
    """The vocabulary's pieces in their order: special tokens, single characters (alone and as
    ``##`` suffixes) that are ASCII or that ``texts`` use, and the pieces ``texts`` use at least
    ``min_count`` times."""
    counts: Counter[int] = Counter()
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) == 4096:
            counts.update(i for ids in tokenizer(batch, add_special_tokens=False)["input_ids"] for i in ids)
            batch = []
    if batch:
        counts.update(i for ids in tokenizer(batch, add_special_tokens=False)["input_ids"] for i in ids)
    special = set(tokenizer.all_special_tokens)
    vocabulary = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])

    def kept(piece: str, index: int) -> bool:
        char = piece.removeprefix("##")
        if piece in special or len(char) == 1 and (char.isascii() or counts[index] > 0):
            return True
        return len(char) > 1 and counts[index] >= min_count

    return [piece for piece, index in vocabulary if kept(piece, index)]


def small_classifier(
    source: str,
    texts: Iterable[str],
    layers: int,
    min_count: int,
    id2label: Mapping[int, str],
    max_length: int,
) -> tuple[torch.nn.Module, BertTokenizerFast]:
    """``source``'s first ``layers`` layers and ``max_length`` positions as a two-class classifier
    over the pieces ``texts`` use."""
    tokenizer = AutoTokenizer.from_pretrained(source)
    if not isinstance(tokenizer, BertTokenizerFast):
        raise ValueError(
            f"{source}: a small encoder is cut from a BERT word-piece tokenizer, not {type(tokenizer).__name__}"
        )
    pieces = kept_pieces(tokenizer, texts, min_count)
    old = tokenizer.get_vocab()
    small_tokenizer = BertTokenizerFast(
        vocab={piece: i for i, piece in enumerate(pieces)},
        do_lower_case=tokenizer.backend_tokenizer.normalizer is not None
        and getattr(tokenizer, "do_lower_case", True),
        model_max_length=max_length,
    )
    model = AutoModelForSequenceClassification.from_pretrained(
        source,
        num_hidden_layers=layers,
        num_labels=len(id2label),
        id2label=dict(id2label),
        label2id={label: i for i, label in id2label.items()},
    )
    embeddings = model.get_input_embeddings()
    rows = torch.tensor([old[piece] for piece in pieces])
    small = torch.nn.Embedding(
        len(pieces), embeddings.embedding_dim, padding_idx=small_tokenizer.pad_token_id
    )
    small.weight.data.copy_(embeddings.weight.data[rows])
    model.set_input_embeddings(small)
    model.config.vocab_size = len(pieces)
    model.config.pad_token_id = small_tokenizer.pad_token_id
    positions = model.base_model.embeddings.position_embeddings
    kept_positions = torch.nn.Embedding(max_length, positions.embedding_dim)
    kept_positions.weight.data.copy_(positions.weight.data[:max_length])
    model.base_model.embeddings.position_embeddings = kept_positions
    model.config.max_position_embeddings = max_length
    return model, small_tokenizer
