"""Both metrics' option specs, by the metric's name: where ``story-quality score`` takes its flags and
the cards their option tables (:mod:`story_quality.option_tables`) from.

Each spec lives with its metric (``story_quality.union.options``, ``story_quality.gruen.options``);
this module only gathers them, so that nothing a metric imports imports the other metric.
"""

from __future__ import annotations

from story_quality.gruen.options import GRUEN_OPTIONS
from story_quality.options import OptionSpec
from story_quality.union.options import UNION_OPTIONS


def option_specs() -> dict[str, OptionSpec]:
    """Each metric's option spec, by the metric's name."""
    return {"union": UNION_OPTIONS, "gruen": GRUEN_OPTIONS}
