"""Render a ``CorrelationReport``: Markdown tables, a JSON dump, and PNG figures.

matplotlib (the ``benchmarks`` extra) is imported only by the PNG writers, with the Agg backend,
so tables can be produced on a machine without it or without a display.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from story_quality.evaluation.correlation import METHODS

from .analysis import CorrelationReport


def _number(value: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def overall_table(report: CorrelationReport) -> list[str]:
    reference = report.reference
    header = [
        "Metric",
        "Pearson (p)",
        "Spearman (p)",
        "Kendall (p)",
        "Paper P / S / K",
        f"Williams p: {reference} better",
    ]
    rows = []
    for metric in report.metrics:
        c = metric.overall
        paper = " / ".join(f"{v:.4f}" for v in metric.paper) if metric.paper else "—"
        test = report.williams.get((reference, metric.name))
        rows.append(
            [
                f"**{metric.name}**" if metric.name == reference else metric.name,
                f"{_number(c.pearson)} ({_p(c.pearson_p)})",
                f"{_number(c.spearman)} ({_p(c.spearman_p)})",
                f"{_number(c.kendall)} ({_p(c.kendall_p)})",
                paper,
                "—" if metric.name == reference or test is None else _p(test.p_value),
            ]
        )
    return _table(header, rows)


def williams_table(report: CorrelationReport) -> list[str]:
    names = [m.name for m in report.metrics]
    rows = []
    for row in names:
        cells = [row]
        for column in names:
            test = report.williams.get((row, column))
            cells.append("—" if row == column or test is None else _p(test.p_value))
        rows.append(cells)
    return _table(["row better than column"] + names, rows)


def biased_table(report: CorrelationReport, method: str = "pearson") -> list[str]:
    header = ["Metric"] + [f"I = {b.level}" for b in report.biased]
    rows = [
        ["*stories per draw: mean (min–max)*"]
        + [f"{b.mean_size:.1f} ({min(b.sizes)}–{max(b.sizes)})" for b in report.biased],
        ["*mean human score*"] + [_number(b.mean_human, 3) for b in report.biased],
    ]
    if any(b.usable < b.repeats for b in report.biased):
        rows.append(["*draws correlated*"] + [f"{b.usable} of {b.repeats}" for b in report.biased])
    rows += [
        [m.name]
        + [
            f"{_number(b.mean[m.name][method], 3)} ± {_number(b.std[m.name][method], 3)}"
            for b in report.biased
        ]
        for m in report.metrics
    ]
    return _table(header, rows)


def error_type_sizes(report: CorrelationReport) -> str:
    """One line with the sets' sizes, e.g. ``19 reasonable stories + repeated plot 24 / ...``."""
    if not report.error_types:
        return ""
    kinds = " / ".join(f"{e.name} {e.n_with_error}" for e in report.error_types)
    return f"{report.error_types[0].n_reasonable} reasonable stories + {kinds} stories with the error"


def error_type_table(report: CorrelationReport, method: str = "pearson") -> list[str]:
    header = (
        ["Metric"]
        + [f"{e.name} ({e.n_reasonable} + {e.n_with_error} = {e.n})" for e in report.error_types]
        + [f"all stories ({report.n_stories})"]
    )
    rows = []
    for m in report.metrics:
        cells = [
            _number(e.correlations[m.name].coefficient(method)) if m.name in e.correlations else "n/a"
            for e in report.error_types
        ]
        rows.append([m.name, *cells, _number(m.overall.coefficient(method))])
        if method == "pearson" and m.paper_error_types:
            published = [
                _number(m.paper_error_types[e.code]) if e.code in m.paper_error_types else "—"
                for e in report.error_types
            ]
            overall = _number(m.paper[0]) if m.paper else "—"
            rows.append([f"*{m.name}, paper (Table 7)*", *published, overall])
    return _table(header, rows)


def to_markdown(report: CorrelationReport, preamble: Sequence[str] = ()) -> str:
    """All tables as one Markdown document; ``preamble`` lines (command, machine) go first."""
    settings = report.settings
    lines = list(preamble)
    lines += [
        f"### Correlation with human judgements ({report.n_stories} stories)",
        "",
        "Human score = mean of the annotators' 0/1 votes. p-values in brackets test H0: no correlation "
        "(two-sided). *Paper*: the figures UNION's paper printed. Last column: one-sided Williams test "
        f"(Pearson) that {report.reference} correlates better than the row's metric.",
        "",
        *overall_table(report),
        "",
    ]
    if report.biased:
        lines += [
            "### Biased test sets (UNION's Figure 2)",
            "",
            "Set I (1..8) keeps each story independently with probability 1 / (|I − k| + 1), where k is the "
            "number of annotators (of 7) who voted it reasonable: set 1 leans to bad stories, set 8 to good "
            f"ones. Pearson, mean ± std over {settings['biased_repeats']} seeded draws per set "
            f"(seed {settings['seed']}; the paper drew once), every metric on the same draws; see "
            "`benchmarks/correlation/robustness.py`.",
            "",
            *biased_table(report),
            "",
        ]
    if report.error_types:
        lines += [
            "### Error types (UNION's Table 7)",
            "",
            "Pearson on each error type's set: the stories all seven annotators voted reasonable + the stories "
            f"that at least {settings.get('error_type_min_annotators', 3)} annotators gave that error code "
            "(a story can join several types); the header gives (reasonable + with the error = set size). "
            "*Paper* rows: the figures UNION's paper printed in Table 7 (not reproduced by its released "
            "scores, which reproduce the overall Pearson; probably another run of UNION).",
            "",
            f"Sets: {error_type_sizes(report)}.",
            "",
            *error_type_table(report),
            "",
        ]
    lines += [
        "### Williams test between every pair (Pearson, one-sided p that the row beats the column)",
        "",
        *williams_table(report),
        "",
    ]
    return "\n".join(lines)


def to_json(report: CorrelationReport) -> dict:
    """Every number of the report (not the per-story scores) as plain JSON types."""

    def correlation(c):
        return (
            {m: c.coefficient(m) for m in METHODS}
            | {f"{m}_p": getattr(c, f"{m}_p") for m in METHODS}
            | {"n": c.n}
        )

    return {
        "n_stories": report.n_stories,
        "reference": report.reference,
        "settings": report.settings,
        "metrics": [
            {
                "name": m.name,
                "published": m.published,
                "paper": m.paper,
                "paper_error_types_pearson": {str(code): r for code, r in m.paper_error_types.items()},
                "overall": correlation(m.overall),
            }
            for m in report.metrics
        ],
        "williams_pearson_one_sided": [
            {"better": a, "than": b, "t": w.t, "df": w.df, "p": w.p_value}
            for (a, b), w in report.williams.items()
        ],
        "biased_sets": [
            {
                "level": b.level,
                "repeats": b.repeats,
                "usable": b.usable,
                "sizes": list(b.sizes),
                "mean_size": b.mean_size,
                "mean_human": b.mean_human,
                "mean": b.mean,
                "std": b.std,
            }
            for b in report.biased
        ],
        "error_types": [
            {
                "code": e.code,
                "name": e.name,
                "n": e.n,
                "n_reasonable": e.n_reasonable,
                "n_with_error": e.n_with_error,
                "correlations": {name: correlation(c) for name, c in e.correlations.items()},
            }
            for e in report.error_types
        ],
    }


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, figure, path: str | Path) -> Path:
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_scatter_png(report: CorrelationReport, path: str | Path, columns: int = 4) -> Path:
    """One panel per metric: metric score (x, higher is better) against human score (y, jittered)."""
    plt = _pyplot()
    count = len(report.metrics)
    columns = min(columns, count)
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 3.0 * rows), squeeze=False)
    # Human scores take 8 values only; a little fixed vertical jitter shows how many stories overlap.
    jitter = np.random.default_rng(0).uniform(-0.02, 0.02, size=report.n_stories)
    for axis, metric in zip(axes.flat, report.metrics, strict=False):
        axis.scatter(metric.scores, report.human + jitter, s=6, alpha=0.45, linewidths=0)
        axis.set_title(f"{metric.name}\nPearson {_number(metric.overall.pearson, 3)}", fontsize=9)
        axis.set_xlabel("metric score", fontsize=8)
        axis.set_ylabel("human score", fontsize=8)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[count:]:
        axis.set_visible(False)
    return _save(plt, figure, path)


def write_biased_png(report: CorrelationReport, path: str | Path) -> Path:
    """Pearson of each metric across the biased sets I = 1..8 (UNION's Figure 2), mean ± std band."""
    if not report.biased:
        raise ValueError("the report has no biased test sets to plot")
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7.5, 4.5))
    levels = [b.level for b in report.biased]
    for metric in report.metrics:
        mean = np.array([b.mean[metric.name]["pearson"] for b in report.biased])
        std = np.array([b.std[metric.name]["pearson"] for b in report.biased])
        (line,) = axis.plot(levels, mean, marker="o", markersize=3, label=metric.name)
        axis.fill_between(levels, mean - std, mean + std, color=line.get_color(), alpha=0.12)
    axis.axhline(0, color="grey", linewidth=0.6)
    axis.set_xticks(levels)
    axis.set_xlabel("biased test set I (keeps a story with k of 7 reasonable votes w.p. 1/(|I−k|+1))")
    axis.set_ylabel("Pearson with human score")
    axis.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(plt, figure, path)


def write_json(report: CorrelationReport, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(to_json(report), indent=2, allow_nan=True) + "\n", encoding="utf-8")
    return path
