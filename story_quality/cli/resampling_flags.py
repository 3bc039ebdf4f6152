"""The resampling options of ``compare`` and ``meta-evaluate``: how many resamples, their seed and
the interval level (checked by :func:`story_quality.evaluation.significance.check_command_settings`
when the command runs)."""

from __future__ import annotations

import argparse

from story_quality.evaluation import significance


def add_resampling_flags(parser: argparse.ArgumentParser, trials: str) -> None:
    """``--resamples`` (``trials``: what besides the bootstrap resamples it counts), ``--seed`` and
    ``--confidence``."""
    parser.add_argument(
        "--resamples", type=int, default=significance.DEFAULT_RESAMPLES,
        help=f"bootstrap resamples and {trials} ({significance.DEFAULT_RESAMPLES})",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling (0)")
    parser.add_argument(
        "--confidence", type=float, default=significance.DEFAULT_CONFIDENCE, help="interval level (0.95)"
    )
