"""The union metric's options: the one place their names, types, ranges, defaults and help are written.

``compute``, :class:`story_quality.union.scorer.UnionScorer`, ``story-quality score`` and the
metric card's option table all read :data:`UNION_OPTIONS` (see ``story_quality.options``).
"""

from __future__ import annotations

import json
import os

from story_quality.options import DEVICE, PRECISION, Option, OptionSpec
from story_quality.union.encoding import MIN_WINDOW
from story_quality.union.human_scale import HUMAN_SCALES

DEFAULT_BATCH_SIZE = 32
# Worker processes preparing text on a GPU at most: one core each, one core left to the main process.
MOST_DEFAULT_WORKERS = 8
# Worker processes a caller may ask for at most: each is a process holding its own tokenizer, and
# past a core each they only add start-up time and memory.
MOST_WORKERS = 64
# How a story longer than the window is read (story_quality.union.windows), and the config key
# under which a checkpoint records the reading it was validated with.
LONG_STORIES = ("head", "windows")
LONG_STORIES_CONFIG_KEY = "union_long_stories"


def shipped_long_stories() -> str:
    """How the shipped default reads a long story, as its config records it."""
    from story_quality.union.checkpoints import shipped_default_dir

    try:
        config = json.loads((shipped_default_dir() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "(not found: the shipped default is missing)"
    return config.get(LONG_STORIES_CONFIG_KEY) or "head"


UNION_OPTIONS = OptionSpec(
    "union",
    (
        Option(
            "batch_size",
            "count",
            DEFAULT_BATCH_SIZE,
            "stories per forward pass; scores do not depend on it",
        ),
        DEVICE,
        Option(
            "max_length",
            "count",
            None,
            f"the window in word pieces, from {MIN_WINDOW} to the checkpoint's own",
            minimum=MIN_WINDOW,
            default_text="the checkpoint's (256 for the shipped default)",
        ),
        Option(
            "long_stories",
            "choice",
            None,
            "how a story longer than the window is read: head keeps its first word pieces (the paper), "
            "windows scores consecutive windows of whole sentences and averages them, weighted by their "
            "lengths; a story that fits the window scores the same either way",
            choices=LONG_STORIES,
            default_text=lambda: (
                "what the checkpoint records, else head; the shipped default records "
                + shipped_long_stories()
            ),
        ),
        Option(
            "percentiles",
            "choice",
            None,
            "also return each story's percentile among the held-back human ROC or WP stories, scored by "
            "the same checkpoint: the human scale (a table ships with the shipped default; others are "
            "refused); formerly rescale, a name taken with a warning for one version",
            choices=tuple(HUMAN_SCALES),
            default_text="None: no percentiles",
        ),
        PRECISION,
        Option(
            "num_workers",
            "count",
            None,
            "worker processes that normalise and tokenise the next stories while the model scores "
            "the ones before (0: the calling process prepares every story first); scores do not depend on it",
            minimum=0,
            maximum=MOST_WORKERS,
            why_maximum="each worker is a process with its own tokenizer; more than a core each only "
            "adds start-up time and memory",
            default_text=f"0 on a CPU (the model uses every core); on a GPU one per core but one, at most "
            f"{MOST_DEFAULT_WORKERS}",
        ),
    ),
    loading=(
        Option(
            "checkpoint",
            "model",
            None,
            "the UNION checkpoint (evaluate.load's config_name): default, the shipped one, a Hub id "
            "(@revision pins it) or a folder",
            default_text="default, the shipped default",
        ),
    ),
    renamed=(("rescale", "percentiles"),),
)


def default_workers(device_type: str, cores: int | None = None) -> int:
    """``num_workers`` when not given: none on a CPU, where the model's products already use every
    core; on a GPU one per core but the one the main process drives the GPU with.

    >>> default_workers("cpu", 16), default_workers("cuda", 16), default_workers("cuda", 2), default_workers("cuda", 1)
    (0, 8, 1, 0)
    """
    if device_type == "cpu":
        return 0
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(0, min(MOST_DEFAULT_WORKERS, cores - 1))
