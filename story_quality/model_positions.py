"""How many tokens an encoder's position embeddings can read.

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
