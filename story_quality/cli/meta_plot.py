"""``story-quality meta-evaluate --plot``: each metric against the ratings, as one picture.

One panel per metric: every item's score against its rating, one colour a system, each system's
mean score at its mean rating marked (a large diamond), and the panel's title giving the figures
a reader looks for first (pooled and within-system Pearson, system-level Pearson, the ceiling).
Drawn with matplotlib (``pip install "story-quality-metrics[plot]"``), imported only when a
picture is asked for.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from story_quality.cli.plot import PLOT_EXTRA
from story_quality.evaluation.meta_results import MetaEvaluation
from story_quality.evaluation.meta_statistics import Estimate
from story_quality.score_file.rows import ScoreFileError

COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
           "tab:olive", "tab:cyan", "tab:gray"]  # fmt: skip


def _figure_text(label: str, estimate: Estimate | None) -> str | None:
    if estimate is None or math.isnan(estimate.estimate):
        return None
    interval = "" if math.isnan(estimate.low) else f" [{estimate.low:.2f}, {estimate.high:.2f}]"
    return f"{label} {estimate.estimate:.3f}{interval}"


def _title(evaluation: MetaEvaluation, k: int) -> str:
    metric = evaluation.metrics[k]
    parts = [
        _figure_text("pooled r", metric.figures.get("pooled.pearson")),
        _figure_text("within-system r", metric.figures.get("within_system.pearson")),
        _figure_text("system-level r", metric.figures.get("system.pearson")),
    ]
    if evaluation.ceiling is not None:
        parts.append(_figure_text("raters' ceiling r", evaluation.ceiling.figures.get("pooled.pearson")))
    shown = [part for part in parts if part]
    return f"{metric.name}\n" + "\n".join(", ".join(shown[i : i + 2]) for i in range(0, len(shown), 2))


def _panel(axes, evaluation: MetaEvaluation, k: int, rng: np.random.Generator) -> None:
    human, scores = evaluation.human, evaluation.scores[k]
    jitter = rng.uniform(-0.08, 0.08, len(human)) * (np.ptp(human) or 1.0) / 4
    systems = evaluation.item_systems or ["all stories"] * len(human)
    for number, name in enumerate(sorted(set(systems))):
        colour = COLOURS[number % len(COLOURS)]
        mask = np.array([system == name for system in systems])
        axes.scatter(human[mask] + jitter[mask], scores[mask], s=14, color=colour, alpha=0.55, linewidths=0,
                     label=name)  # fmt: skip
        if evaluation.item_systems is not None:
            axes.scatter([human[mask].mean()], [scores[mask].mean()], marker="D", s=90, color=colour,
                         edgecolor="black", linewidths=1.2, zorder=4)  # fmt: skip
    axes.set_xlabel("human rating (mean of the raters)")
    axes.set_ylabel(evaluation.metrics[k].column or "score")
    axes.set_title(_title(evaluation, k), fontsize=8)
    axes.grid(alpha=0.3)


def plot_meta_evaluation(evaluation: MetaEvaluation, path: str | pathlib.Path, software: str) -> None:
    """One panel per metric: scores against ratings, one colour a system, the system means marked;
    ``software`` (the command that drew it) is written into the picture."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ScoreFileError(f"--plot needs matplotlib, which is not installed: {PLOT_EXTRA}") from None
    count = len(evaluation.metrics)
    columns = min(count, 3)
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(4.6 * columns, 4.2 * rows + 0.6))
    FigureCanvasAgg(figure)
    rng = np.random.default_rng(evaluation.seed)
    for k in range(count):
        axes = figure.add_subplot(rows, columns, k + 1)
        _panel(axes, evaluation, k, rng)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    if evaluation.item_systems is not None:
        figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, frameon=False,
                      title="system (diamond: its mean score at its mean rating)", title_fontsize=8)  # fmt: skip
    # One panel is narrower than the heading on one line: it takes two there, and the room for them.
    figure.suptitle(
        f"{evaluation.n} rated stories: each metric against the ratings{chr(10) if columns == 1 else ' '}"
        f"({evaluation.confidence:.0%} bootstrap intervals)",
        fontsize=9,
    )
    top = 0.94 if columns == 1 else 0.97
    figure.tight_layout(rect=(0, 0.08 if evaluation.item_systems is not None else 0, 1, top))
    figure.savefig(path, dpi=120, metadata={"Software": software})
