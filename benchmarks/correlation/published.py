"""The metrics UNION's release scored the 400 ROC stories with, and the figures its paper printed.

``metric_output/`` of the UNION release holds one file per metric, aligned with ``ant_data.txt``.
File names are terse (``union_recon.txt`` is the ablation *without* reconstruction, as the
release's README says; ``dis.txt`` is the discriminator baseline of Kannan & Vinyals, 2017), so
this table gives each its display name and direction. The published correlations (UNION paper,
ROCStories, Table 5) sit next to them so every new result is read against the paper.

The paper's Table 7 (Pearson on the error-type sets, see ``robustness.py``) is transcribed for UNION
only. The released ``union.txt`` does not reproduce it (it gives about 0.556 / 0.444 / 0.386 / 0.621
where the paper printed 0.6943 / 0.5144 / 0.4571 / 0.6744), although it reproduces Table 5's
overall 0.3687; Table 7 was probably computed with another run of UNION. The report therefore shows
the published figures beside the ones computed from the released scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from story_quality.evaluation.annotations import read_scores


@dataclass(frozen=True)
class PublishedMetric:
    file_name: str
    name: str
    lower_is_better: bool = False
    # (Pearson, Spearman, Kendall) printed in the paper for ROCStories; None where not transcribed.
    paper: tuple[float, float, float] | None = None
    # (error code, Pearson) pairs of the paper's Table 7 (error-type sets); empty where not transcribed.
    paper_error_types: tuple[tuple[int, float], ...] = ()


PUBLISHED_METRICS: tuple[PublishedMetric, ...] = (
    PublishedMetric(
        "union.txt",
        "UNION",
        paper=(0.3687, 0.4599, 0.3386),
        paper_error_types=((1, 0.6943), (2, 0.5144), (3, 0.4571), (4, 0.6744)),
    ),
    PublishedMetric("union_recon.txt", "UNION w/o reconstruction", paper=(0.3101, 0.4027, 0.2927)),
    PublishedMetric("bleurt.txt", "BLEURT", paper=(0.2310, 0.2353, 0.1679)),
    PublishedMetric("ppl.txt", "Perplexity", lower_is_better=True, paper=(0.2464, 0.2295, 0.1650)),
    PublishedMetric("moverscore.txt", "MoverScore", paper=(0.1538, 0.1535, 0.1093)),
    PublishedMetric("bleu.txt", "BLEU", paper=(0.0299, 0.0320, 0.0231)),
    PublishedMetric("ruber_score.txt", "RUBER-BERT"),
    PublishedMetric("ruber_ref_score.txt", "RUBER-BERT (referenced part)"),
    PublishedMetric("ruber_unref_score.txt", "RUBER-BERT (unreferenced part)"),
    PublishedMetric("dis.txt", "DisScore"),
)


def oriented_name(name: str, lower_is_better: bool) -> str:
    """The table label: a lower-is-better metric is negated and shown as ``-name``."""
    return f"-{name}" if lower_is_better and not name.startswith("-") else name


def load_published_metrics(directory: str | Path, expected: int) -> list[tuple[PublishedMetric, np.ndarray]]:
    """Every known metric file present in ``directory``, raw (not yet negated), in table order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"published metric directory not found: {directory}")
    return [
        (metric, read_scores(directory / metric.file_name, expected))
        for metric in PUBLISHED_METRICS
        if (directory / metric.file_name).is_file()
    ]
