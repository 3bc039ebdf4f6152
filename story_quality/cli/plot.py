"""``story-quality compare --plot``: the systems' scores as one picture.

One row per system (and per human-scale domain): every score, the quartile box, and the mean
with its bootstrap interval; the pairs' differences and p-values underneath. Drawn with
matplotlib (``pip install "story-quality-metrics[plot]"``), imported only when a picture is asked for.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Sequence

import numpy as np

from story_quality.evaluation.comparison import Comparison, SystemResult
from story_quality.score_file.claim import refuse_unusable_name, same_file
from story_quality.score_file.rows import ScoreFileError
from story_quality.signature import Signature

PLOT_EXTRA = 'pip install "story-quality-metrics[plot]"'
# Written into every picture, so that a rerun may replace its own picture and nothing else.
PLOT_SOFTWARE = "story-quality compare"


def check_plot_path(
    path: pathlib.Path, inputs: Sequence[str | pathlib.Path], software: str = PLOT_SOFTWARE
) -> None:
    """Before any work: the picture's folder exists, it is no input, and only a picture ``software``
    (the command) wrote is replaced."""
    if path.suffix.lower() != ".png":
        raise ScoreFileError(f"--plot {path}: the picture is a .png file")
    refuse_unusable_name(path, "--plot", ".png file")
    if not path.parent.is_dir():
        raise ScoreFileError(f"--plot {path}: the folder {path.parent} does not exist")
    if path.is_dir():
        raise ScoreFileError(f"--plot {path} is a folder; name a .png file")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ScoreFileError(
            f"--plot {path}: cannot be written (the folder {path.parent} or the file is read-only)"
        )
    if any(same_file(path, pathlib.Path(source)) for source in inputs):
        raise ScoreFileError(f"--plot {path} is one of the inputs")
    if path.exists() and software.encode() not in path.read_bytes()[:4096]:
        raise ScoreFileError(f"--plot {path} exists and was not written by {software}; it is left alone")


def _quartile_box(axes, row: int, scores: np.ndarray, colour: str) -> None:
    """Quartiles and median as a box, whiskers to the furthest score within 1.5 box lengths."""
    q1, median, q3 = np.percentile(scores, [25, 50, 75])
    reach = 1.5 * (q3 - q1)
    low = scores[scores >= q1 - reach].min()
    high = scores[scores <= q3 + reach].max()
    axes.barh(row, q3 - q1, left=q1, height=0.5, color=colour, alpha=0.35, edgecolor=colour)
    axes.vlines(median, row - 0.25, row + 0.25, color=colour, linewidth=2)
    axes.hlines(row, low, q1, color=colour, linewidth=1)
    axes.hlines(row, q3, high, color=colour, linewidth=1)


def _draw_row(axes, row: int, result: SystemResult, colour: str, rng: np.random.Generator) -> None:
    jitter = rng.uniform(-0.22, 0.22, len(result.scores))
    axes.scatter(result.scores, row + jitter, s=6, color=colour, alpha=0.3, linewidths=0)
    _quartile_box(axes, row, result.scores, colour)
    interval = result.interval
    axes.hlines(row, interval.low, interval.high, color="black", linewidth=4, zorder=3)
    axes.scatter([interval.estimate], [row], marker="D", s=36, color="white", edgecolor="black", zorder=4)


def _row_label(result: SystemResult) -> str:
    interval = result.interval
    return (
        f"{result.name}\nn {result.n}, mean {interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"
    )


def plot_comparison(comparison: Comparison, path: str | pathlib.Path) -> None:
    """One row per system (and per human-scale domain): every score, quartile box, and the mean
    with its interval; the pairs' differences and p-values underneath."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ScoreFileError(f"--plot needs matplotlib, which is not installed: {PLOT_EXTRA}") from None
    rows = [*comparison.systems, *comparison.human]
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    figure = Figure(figsize=(9, 1.5 + 0.75 * len(rows) + 0.22 * len(comparison.pairs[:6])))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    rng = np.random.default_rng(comparison.seed)
    for row, result in enumerate(rows):
        colour = "0.45" if result in comparison.human else colours[row % len(colours)]
        _draw_row(axes, row, result, colour, rng)
    axes.set_yticks(range(len(rows)), [_row_label(result) for result in rows], fontsize=8)
    axes.set_ylim(len(rows) - 0.5, -0.5)
    if comparison.human:
        axes.axhline(len(comparison.systems) - 0.5, color="0.7", linewidth=0.8, linestyle="--")
    parsed = Signature.parse_or_none(comparison.signature)
    label = (parsed.get("checkpoint") or "") if parsed is not None else ""
    axes.set_xlabel(f"{comparison.score_column} score {f'({label})' if label else ''}")
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(
        f"{comparison.score_column} by system: every score, quartiles (box), mean (diamond) and its "
        f"{comparison.confidence:.0%} bootstrap interval (black)",
        fontsize=9,
    )
    lines = [
        f"{p.b} - {p.a}: {p.result.difference.estimate:+.3f} [{p.result.difference.low:+.3f}, "
        f"{p.result.difference.high:+.3f}], p = {p.result.p_paired_bootstrap:.4f} (paired bootstrap), "
        f"{p.result.p_approximate_randomization:.4f} (approximate randomization)"
        for p in comparison.pairs[:6]
    ]
    if lines:
        figure.text(0.01, 0.01, "\n".join(lines), fontsize=7.5, va="bottom")
    figure.tight_layout(rect=(0, 0.03 + 0.035 * len(lines), 1, 1))
    figure.savefig(path, dpi=120, metadata={"Software": PLOT_SOFTWARE})
