"""The project's published UNION checkpoints: the one place their Hub ids are written."""

from __future__ import annotations

import os

PUBLISHED_CHECKPOINTS: dict[str, str] = {
    "roc": "story-quality-metrics/union-roc",
    "wp": "story-quality-metrics/union-wp",
}
PUBLISHED_CHECKPOINTS["default"] = PUBLISHED_CHECKPOINTS["roc"]


def resolve_checkpoint(name: str) -> str:
    """Map a config name ("default", "roc", "wp") to its Hub id; anything else is a Hub id or a directory.

    >>> resolve_checkpoint("default")
    'story-quality-metrics/union-roc'
    >>> resolve_checkpoint("someone/their-union")
    'someone/their-union'
    """
    if name in PUBLISHED_CHECKPOINTS:
        return PUBLISHED_CHECKPOINTS[name]
    return os.path.expanduser(name)
