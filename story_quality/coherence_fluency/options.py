"""The coherence_fluency metric's options: the one place their names, types, defaults and help are written."""

from __future__ import annotations

from story_quality.options import DEVICE, PRECISION, Option, OptionSpec

DEFAULT_BATCH_SIZE = 32

COHERENCE_FLUENCY_OPTIONS = OptionSpec(
    "coherence_fluency",
    (
        Option(
            "batch_size",
            "count",
            DEFAULT_BATCH_SIZE,
            "stories per forward pass of UNION (the fluency reader reads twice as many sentences); "
            "scores do not depend on it",
        ),
        DEVICE,
        PRECISION,
    ),
    loading=(
        Option(
            "checkpoint",
            "model",
            None,
            "the fluency reader's folder, holding its fusion constants: a folder written by "
            "training/train_fluency.py and fitted by benchmarks/fit_fluency_fusion.py (no reader ships)",
            default_text="none: a reader folder must be given",
        ),
    ),
)
