"""How many tokens an encoder's position embeddings can read, and a checkpoint's window.

BERT reads ``max_position_embeddings`` tokens. RoBERTa-style encoders (RoBERTa, MPNet, ...)
number their positions from ``pad_token_id + 1``, so of the 514 positions they declare only 512
are usable: a longer input fails inside torch's embedding lookup, far from its cause.
"""

from __future__ import annotations

from typing import Any

# Encoders whose position ids start after the padding index (their embeddings' own rule).
POSITIONS_AFTER_PADDING = frozenset(
    {
        "roberta",
        "roberta-prelayernorm",
        "xlm-roberta",
        "xlm-roberta-xl",
        "camembert",
        "mpnet",
        "data2vec-text",
    }
)


def usable_positions(config: Any) -> int | None:
    """The longest input (special tokens included) ``config``'s position embeddings read; None if unknown."""
    positions = getattr(config, "max_position_embeddings", None)
    if not positions:
        return None
    if getattr(config, "model_type", None) in POSITIONS_AFTER_PADDING:
        pad = getattr(config, "pad_token_id", None)
        return int(positions) - ((1 if pad is None else int(pad)) + 1)
    return int(positions)


# What a tokenizer that records no limit reports as its ``model_max_length`` is far above this.
_UNSET_MAX_LENGTH = 10**6


def model_window(tokenizer: Any, config: Any, max_length: int | None = None) -> int:
    """The word pieces a text may have: the smallest of the caller's ``max_length``, the tokenizer's
    recorded limit and the positions the encoder reads (UNION's scorer and GRUEN's models alike)."""
    limits = [max_length] if max_length else []
    recorded = getattr(tokenizer, "model_max_length", None)
    if recorded is not None and 0 < recorded < _UNSET_MAX_LENGTH:
        limits.append(int(recorded))
    positions = usable_positions(config)
    if positions:
        limits.append(positions)
    if not limits:
        raise ValueError("Cannot tell the model's window: pass max_length.")
    return min(limits)
