"""The metrics this package holds, one entry each: every list of metrics reads it.

An entry says what the rest of the package needs to know of a metric: its name, its option
spec (:mod:`story_quality.options`: compute's checks, the scorer's keywords, the command's flags,
the card's table), how to build its scorer, which per-text lists of its result a score file's
rows hold (and under which name), which keys of its result are the mean of ``scores``, what
a score in each of its row columns can be, and, for a metric with a human scale, the signature
parts that scale adds and where ``compare`` finds the held-back human stories' scores. A third
metric is its own folder (``story_quality/NAME/`` with ``options.py`` and ``scorer.py``,
``metrics/NAME/``) and one entry here.

Nothing here imports torch: a scorer's module is imported when one is built.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from story_quality.gruen.options import GRUEN_OPTIONS, MODEL_OPTIONS
from story_quality.options import OptionSpec
from story_quality.signature import Signature
from story_quality.union.human_scale import HUMAN_SCALES, held_back_rows
from story_quality.union.options import UNION_OPTIONS

# The held-back human stories of a signature's checkpoint, for a score column: (rows as (label,
# scores), the table's sha256, notes on why none are shown).
HeldBack = tuple[list[tuple[str, Any]], str | None, list[str]]


@dataclass(frozen=True)
class MetricEntry:
    """One metric, as the package's lists need it (see the module's docstring)."""

    name: str
    about: str  # what it judges, in a word or two (``story-quality score --help``)
    options: OptionSpec
    scorer_class: str  # "module:Class" of the scorer, imported when first built
    row_keys: Mapping[str, str]  # a per-text list of the result -> the score file row's field
    mean_keys: tuple[str, ...]  # keys of the result that are the mean of its ``scores``
    score_ranges: Mapping[str, tuple[float, float]]  # a row field -> what a score there can be
    scorer_options: tuple[str, ...] = ()  # compute's options the scorer is built with, not called
    scale_parts: tuple[str, ...] = ()  # signature parts that rescale the scores, the raw ones unchanged
    held_back: Callable[[Signature, str], HeldBack] | None = None  # human stories' scores, for compare

    def build_scorer(self, options: Mapping[str, Any]) -> Any:
        """The scorer, built with ``options`` (its loading options and :attr:`scorer_options`)."""
        module, name = self.scorer_class.split(":")
        return getattr(importlib.import_module(module), name)(**options)


GRUEN_ROWS = ("gruen", "grammaticality", "redundancy", "focus", "coherence")
# GRUEN's parts: grammaticality is at least 0; redundancy -0.1 a flag, focus -0.1 or 0, coherence a
# negated loss: penalties, never above 0.
GRUEN_RANGES = {
    "gruen": (0.0, 1.0),
    "grammaticality": (0.0, math.inf),
    "redundancy": (-math.inf, 0.0),
    "focus": (-0.1, 0.0),
    "coherence": (-math.inf, 0.0),
}
REGISTRY: dict[str, MetricEntry] = {
    entry.name: entry
    for entry in (
        MetricEntry("union", "coherence", UNION_OPTIONS, "story_quality.union.scorer:UnionScorer",
                    {"scores": "union", "percentiles": "percentile"}, ("union_score",),
                    {"union": (0.0, 1.0), "percentile": (0.0, 100.0)},
                    scale_parts=tuple(HUMAN_SCALES), held_back=held_back_rows),
        MetricEntry("gruen", "quality", GRUEN_OPTIONS, "story_quality.gruen.scorer:GruenScorer",
                    {key: key for key in GRUEN_ROWS}, ("gruen_score", "mean_gruen"), GRUEN_RANGES,
                    scorer_options=MODEL_OPTIONS),
    )
}  # fmt: skip
METRICS = tuple(REGISTRY)


def option_specs() -> dict[str, OptionSpec]:
    """Each metric's option spec, by the metric's name."""
    return {name: entry.options for name, entry in REGISTRY.items()}


def score_ranges() -> dict[str, tuple[float, float]]:
    """What a score in each row field of a score file can be, whichever metric wrote it."""
    return {field: bounds for entry in REGISTRY.values() for field, bounds in entry.score_ranges.items()}


def means_of() -> dict[str, str]:
    """Each mean key of any metric's result, and the per-text key it is the mean of."""
    return {key: "scores" for entry in REGISTRY.values() for key in entry.mean_keys}
