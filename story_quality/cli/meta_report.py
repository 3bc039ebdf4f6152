"""``story-quality meta-evaluate``'s table for people: the metrics (and the raters' ceiling), the
baselines, and each pair of metrics, every figure with its interval (what the figures are:
:mod:`story_quality.evaluation.meta_evaluation`)."""

from __future__ import annotations

import math

from story_quality.evaluation.meta_figures import FIGURE_LABELS
from story_quality.evaluation.meta_results import MetaEvaluation, MetricResult
from story_quality.evaluation.meta_statistics import Estimate


def _cell(estimate: Estimate, rank: int | None = None) -> str:
    if math.isnan(estimate.estimate):
        return "-"
    interval = "" if math.isnan(estimate.low) else f" [{estimate.low:.2f}, {estimate.high:.2f}]"
    return f"{estimate.estimate:.3f}{interval}" + ("" if rank is None else f" ({rank})")


def _grid(evaluation: MetaEvaluation, columns: list[MetricResult], heading: str) -> list[str]:
    label = max(len(FIGURE_LABELS[name]) for name in evaluation.figures)
    cells = {name: [_cell(result.figures[name], result.rank.get(name)) for result in columns]
             for name in evaluation.figures}  # fmt: skip
    width = max(
        len(text) for text in [*(r.name for r in columns), *(c for row in cells.values() for c in row)]
    )
    names = (f"{'':<{label}}  " + "  ".join(f"{result.name:<{width}}" for result in columns)).rstrip()
    lines = ["", heading, names]
    for name in evaluation.figures:
        lines.append(
            (f"{FIGURE_LABELS[name]:<{label}}  " + "  ".join(f"{c:<{width}}" for c in cells[name])).rstrip()
        )
    return lines


def _pairs(evaluation: MetaEvaluation) -> list[str]:
    lines = []
    label = max(len(FIGURE_LABELS[name]) for name in evaluation.figures)
    if evaluation.pairs:
        lines += [
            "",
            "between metrics: the interval resamples as above (other stories, prompts and systems); the "
            "permutation test\n(PERM-BOTH) keeps these stories and asks whether the two metrics are exchangeable "
            "on them, so the two\nmay disagree near the edge of significance",
        ]
    for pair in evaluation.pairs:
        lines += [
            "",
            f"{pair.a} - {pair.b}: difference, {evaluation.confidence:.0%} interval, p (paired permutation)",
        ]
        for name, figure in pair.result.items():
            difference = figure.difference
            if math.isnan(difference.estimate):
                lines.append(f"{FIGURE_LABELS[name]:<{label}}  -")
                continue
            interval = (
                "" if math.isnan(difference.low) else f" [{difference.low:+.3f}, {difference.high:+.3f}]"
            )
            williams = "" if figure.p_williams is None else f", Williams p = {figure.p_williams:.4f}"
            lines.append(
                f"{FIGURE_LABELS[name]:<{label}}  {difference.estimate:+.3f}{interval}  p = {figure.p_permutation:.4f}{williams}"
            )
    return lines


def evaluation_table(evaluation: MetaEvaluation) -> str:
    """The meta-evaluation as text for people: metrics (and the raters' ceiling), baselines, pairs."""
    level = f"{evaluation.confidence:.0%}"
    over = " and ".join(
        what for what, present in (("systems", evaluation.systems), ("groups" if evaluation.groups else "items", True))
        if present
    )  # fmt: skip
    lines = [
        f"ratings: {evaluation.ratings}: {evaluation.rows} rows, {evaluation.missing} without a rating, "
        f"{evaluation.unscored} rated but unscored (both left out); {evaluation.n} items"
        + "".join(
            f", {count} {what}"
            for what, count in (
                ("systems", evaluation.systems),
                ("groups", evaluation.groups),
                ("raters", evaluation.raters),
            )
            if count
        ),  # fmt: skip
        f"each figure with its {level} bootstrap interval ({evaluation.resamples} resamples of {over}, "
        f"seed {evaluation.seed}); - where the data cannot give it",
    ]
    columns = [*evaluation.metrics, *([evaluation.ceiling] if evaluation.ceiling else [])]
    ranked = (
        " (n): the metric's group, metrics in one group not told apart" if evaluation.metrics[0].rank else ""
    )
    lines += _grid(
        evaluation, columns, "metrics" + (" and the raters' ceiling" if evaluation.ceiling else "") + ranked
    )
    lines += _grid(evaluation, evaluation.baselines, "baselines with no model (oracles: every story scored with its "
                   "system's or group's mean rating)")  # fmt: skip
    lines += _pairs(evaluation)
    lines.append("")
    for metric in evaluation.metrics:
        lines.append(
            f"{metric.name}: {metric.column} of {metric.source}, {metric.signature or 'no signature'}"
        )
    return "\n".join(lines + [f"note: {note}" for note in evaluation.notes])
