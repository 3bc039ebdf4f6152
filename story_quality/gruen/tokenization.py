"""Turning sentences into model inputs that fit the model's window.

Sentences longer than the window are cut to it (the release cuts at 510 word pieces plus
``[CLS]``/``[SEP]``, which is BERT's 512-token window); a warning counts how many were cut.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from story_quality.gruen.loading import LoadedModel

logger = logging.getLogger(__name__)


def encode_single(
    loaded: LoadedModel, sentences: Sequence[str], max_length: int | None = None, what: str = ""
):
    """Token ids (special tokens included) and their special-token masks, cut to the window."""
    limit = min(loaded.window, max_length or loaded.window)
    tokenizer = loaded.tokenizer
    full = tokenizer(list(sentences), add_special_tokens=False, verbose=False)["input_ids"]
    room = limit - tokenizer.num_special_tokens_to_add(pair=False)
    cut = sum(len(ids) > room for ids in full)
    if cut:
        logger.warning(
            "GRUEN: %d sentence(s) longer than %d tokens were truncated for the %s.", cut, limit, what
        )
    enc = tokenizer(
        list(sentences), truncation=True, max_length=limit, return_special_tokens_mask=True, verbose=False
    )
    return enc["input_ids"], enc["special_tokens_mask"]


def encode_words(loaded: LoadedModel, sentences: Sequence[str]) -> list[list[int]]:
    """Token ids of each sentence without special tokens and without any cut."""
    return loaded.tokenizer(list(sentences), add_special_tokens=False, verbose=False)["input_ids"]
