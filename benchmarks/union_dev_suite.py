"""The development suite: one UNION checkpoint (or several) on every development set, through the metric.

    python -m benchmarks.union_dev_suite                                    # the shipped default
    python -m benchmarks.union_dev_suite --checkpoint default --checkpoint outputs/union-mix \\
        --report benchmarks/results/union_dev_suite.md

Sets (``$STORY_QUALITY_DATA``, see ``benchmarks.shared_data``):

- **ROC-400**: UNION's 400 annotated ROC stories, human score = mean of 7 votes.
- **ROC dev-300 / WP dev-300**: the generated stories of ``dev-annotations/`` rated by 5
  people each (``manplts_*.jsonl``), human score = mean rating.
- **ROC / WP held-back pairs**: the human stories ``benchmarks.dev_split`` keeps out of every
  training corpus, each with one corrupted copy (UNION's negative sampling, seed 2026): the
  share of pairs where the human story scores higher, the share of all texts on the right
  side of 0.5, and the human stories' mean score. WP stories as UNION's WP data has them
  (prompt + about 200 words), and whole (prompt + the whole story, 434 words at the median,
  corrupted as a whole): the second reads stories longer than any window.

Each correlation is printed beside its reference points: the paper's UNION where it published
one, the MANPLTS study's own model on its sets, and a no-model baseline (distinct 3-grams /
all 3-grams). Every recipe and checkpoint decision is taken on this whole table.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import datasets  # noqa: E402
import evaluate  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.dev_split import roc_stories, wp_rows  # noqa: E402
from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.shared_data import shared_data  # noqa: E402
from story_quality import metric_path  # noqa: E402
from story_quality.annotations import read_annotations  # noqa: E402
from story_quality.meta_evaluation import METHODS, correlate  # noqa: E402
from story_quality.training.corpora import writing_prompts_segments, writing_prompts_text  # noqa: E402
from story_quality.training.negatives.build import build_union_dataset  # noqa: E402
from story_quality.training.negatives.lexicon import Lexicon  # noqa: E402
from story_quality.union.checkpoints import is_config_name  # noqa: E402
from story_quality.union.story_text import StoryNormalization  # noqa: E402

PAIR_SEED = 2026
# Held-back pairs keep case and names: each checkpoint's own normalisation lowercases and tags them.
PAIR_NORMALIZATION = StoryNormalization(roc_tokenize=True, plain_typography=True)
PAPER_UNION_ROC400 = {"pearson": 0.3687, "spearman": 0.4599, "kendall": 0.3386}


@dataclass
class RatedSet:
    name: str
    stories: list[str]
    human: np.ndarray
    references: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class PairSet:
    name: str
    human: list[str]
    corrupted: list[str]


def distinct_trigrams(text: str) -> float:
    """Distinct 3-grams over all 3-grams of the text's words (1.0 below three words).

    >>> distinct_trigrams("a b c a b c"), distinct_trigrams("a b")
    (0.75, 1.0)
    """
    words = text.split()
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return len(set(grams)) / len(grams) if grams else 1.0


def _correlations(scores: Sequence[float], human: np.ndarray) -> dict[str, float]:
    measured = correlate(np.asarray(scores, dtype=float), human)
    return {method: measured.coefficient(method) for method in METHODS}


def _with_baseline(name: str, stories: list[str], human: np.ndarray, refs: dict) -> RatedSet:
    refs["distinct 3-grams (no model)"] = _correlations([distinct_trigrams(s) for s in stories], human)
    return RatedSet(name, stories, human, refs)


def rated_sets() -> list[RatedSet]:
    data = shared_data("union-roc")
    annotated = read_annotations(data / "ant_data.txt")
    published = np.loadtxt(data / "metric_output" / "union.txt")
    sets = [
        _with_baseline(
            "ROC-400 (UNION)",
            list(annotated.stories),
            annotated.human_scores,
            {
                "paper's UNION (Table 1)": PAPER_UNION_ROC400,
                "paper's UNION (released scores)": _correlations(published, annotated.human_scores),
            },
        )
    ]
    for domain in ("roc", "wp"):
        with shared_data("dev-annotations", f"manplts_{domain}.jsonl").open(encoding="utf-8") as source:
            rows = [json.loads(line) for line in source if line.strip()]
        stories = [" ".join(row["text"].replace("</s>", " ").split()) for row in rows]
        human = np.array([row["mean"] for row in rows], dtype=float)
        refs = {"MANPLTS's own model": _correlations([row["manplts_score"] for row in rows], human)}
        sets.append(_with_baseline(f"{domain.upper()} dev-300 (MANPLTS)", stories, human, refs))
    return sets


def _pairs(name: str, texts: list[str]) -> PairSet:
    built = build_union_dataset(
        datasets.Dataset.from_dict({"text": texts}),
        normalization=PAIR_NORMALIZATION,
        seed=PAIR_SEED,
        lexicon=Lexicon(tagger="heuristic", wordnet="none"),
    )
    human = {row["story_index"]: row["text"] for row in built if row["label"] == 1}
    corrupted = {row["story_index"]: row["text"] for row in built if row["label"] == 0}
    order = sorted(human.keys() & corrupted.keys())
    return PairSet(name, [human[i] for i in order], [corrupted[i] for i in order])


def pair_sets() -> list[PairSet]:
    datasets.disable_progress_bars()
    roc = roc_stories()[1]
    held_wp = wp_rows()[1]
    wp = [writing_prompts_text(row["prompt"], row["story"]) for row in held_wp]
    whole = ["\n".join(writing_prompts_segments(row["prompt"], row["story"])) for row in held_wp]
    return [
        _pairs("ROC held-back pairs", roc),
        _pairs("WP held-back pairs", [t for t in wp if t]),
        _pairs("WP whole-story pairs", [t for t in whole if t]),
    ]


def load_union(checkpoint: str) -> evaluate.EvaluationModule:
    """The ``union`` metric on a config name (default, roc, wp) or a checkpoint folder (made absolute)."""
    return evaluate.load(
        metric_path("union"),
        checkpoint if is_config_name(checkpoint) else str(pathlib.Path(checkpoint).resolve()),
    )


def evaluate_checkpoint(
    checkpoint: str,
    rated: list[RatedSet],
    pairs: list[PairSet],
    batch_size: int,
    max_length: int | None,
    long_stories: str | None = None,
) -> dict[str, dict[str, float]]:
    metric = load_union(checkpoint)
    options = {"batch_size": batch_size, "max_length": max_length, "long_stories": long_stories}
    rows: dict[str, dict[str, float]] = {}
    for rated_set in rated:
        scores = metric.compute(predictions=rated_set.stories, **options)["scores"]
        rows[rated_set.name] = _correlations(scores, rated_set.human)
    for pair_set in pairs:
        human = np.asarray(metric.compute(predictions=pair_set.human, **options)["scores"])
        corrupted = np.asarray(metric.compute(predictions=pair_set.corrupted, **options)["scores"])
        rows[pair_set.name] = {
            "pairs": len(human),
            "pair accuracy": float((human > corrupted).mean()),
            "accuracy at 0.5": float(((human > 0.5).sum() + (corrupted <= 0.5).sum()) / (2 * len(human))),
            "human mean": float(human.mean()),
        }
    return rows


def to_markdown(
    results: dict[str, dict[str, dict[str, float]]], rated: list[RatedSet], preamble: list[str]
) -> str:
    lines = [*preamble, "", "## Correlation with people (Pearson / Spearman / Kendall)", ""]
    lines += ["| | " + " | ".join(s.name for s in rated) + " |", "|---" * (len(rated) + 1) + "|"]

    def cell(values: dict[str, float] | None) -> str:
        return " / ".join(f"{values[m]:.3f}" for m in METHODS) if values else "–"

    for checkpoint, rows in results.items():
        lines.append(f"| **{checkpoint}** | " + " | ".join(f"**{cell(rows[s.name])}**" for s in rated) + " |")
    references = list(dict.fromkeys(ref for s in rated for ref in s.references))
    for ref in references:
        lines.append(f"| {ref} | " + " | ".join(cell(s.references.get(ref)) for s in rated) + " |")
    pair_names = [name for name in next(iter(results.values())) if "pairs" in name]
    lines += ["", "## Held-back human stories against their corrupted copies", ""]
    lines += ["| | " + " | ".join(pair_names) + " |", "|---" * (len(pair_names) + 1) + "|"]
    for checkpoint, rows in results.items():
        cells = [
            f"{rows[p]['pair accuracy']:.3f} pairs / {rows[p]['accuracy at 0.5']:.3f} at 0.5 / "
            f"human mean {rows[p]['human mean']:.3f}"
            for p in pair_names
        ]
        lines.append(f"| **{checkpoint}** | " + " | ".join(cells) + " |")
    counts = ", ".join(f"{p}: {int(next(iter(results.values()))[p]['pairs'])}" for p in pair_names)
    lines += [
        "",
        f"Pairs: {counts}. *pairs*: share where the human story scores higher than its corrupted copy; "
        "*at 0.5*: share of all texts on the right side of 0.5; *human mean*: mean score of the human stories.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--checkpoint",
        action="append",
        help="the metric's config name (default, roc, wp) or a checkpoint folder; repeat for several rows "
        "(default: default)",
    )
    parser.add_argument(
        "--max-length", type=int, help="word pieces kept per story (default: each checkpoint's window)"
    )
    parser.add_argument(
        "--long-stories",
        choices=["head", "windows"],
        help="how stories longer than the window are read (default: what each checkpoint records)",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="scoring batch size (default: 32)")
    parser.add_argument("--report", type=pathlib.Path, help="also write the markdown report here")
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    checkpoints = args.checkpoint or ["default"]
    evaluate.logging.disable_progress_bar()
    started = time.perf_counter()
    rated, pairs = rated_sets(), pair_sets()
    results = {
        checkpoint: evaluate_checkpoint(
            checkpoint, rated, pairs, args.batch_size, args.max_length, args.long_stories
        )
        for checkpoint in checkpoints
    }
    command = "python -m benchmarks.union_dev_suite " + " ".join(
        [f"--checkpoint {c}" for c in checkpoints]
        + ([f"--max-length {args.max_length}"] if args.max_length else [])
        + ([f"--long-stories {args.long_stories}"] if args.long_stories else [])
    )
    report = to_markdown(
        results,
        rated,
        [f"`{command}`", "", describe_machine(), f"({time.perf_counter() - started:.0f} s)"],
    )
    print(report)
    if args.report:
        args.report.write_text(report, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
