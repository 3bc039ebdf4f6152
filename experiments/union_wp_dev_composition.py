"""What does the WP dev-300 correlation measure? The set split by its stories' repeated 3-grams.

Many of the MANPLTS WritingPrompts stories repeat no 3-gram at all (distinct 3-grams / all
3-grams = 1.0), which human prose of 500 words almost never does and n-gram-blocked decoding
always does. This study splits the set there and prints, per checkpoint (stories read as the
``--long-stories`` option says): the share and mean rating of each part, the checkpoint's mean
score on each part, how often it ranks a story of the repeating part above one of the
non-repeating part (AUC), and its correlation with people inside each part, where the split
cannot help it.

    python -m experiments.union_wp_dev_composition --checkpoint default --checkpoint outputs/union-seg2
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import evaluate  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.dev_sets import distinct_trigrams, rated_sets  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.correlation import METHODS, correlate  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402


def auc(higher: np.ndarray, lower: np.ndarray) -> float:
    """Share of (higher, lower) pairs where the first scores above the second, ties counting half.

    >>> auc(np.array([0.9, 0.4]), np.array([0.5, 0.1]))
    0.75
    """
    difference = higher[:, None] - lower[None, :]
    return float(((difference > 0).sum() + 0.5 * (difference == 0).sum()) / difference.size)


def _cell(scores: np.ndarray, human: np.ndarray) -> str:
    measured = correlate(scores, human)
    return " / ".join(f"{measured.coefficient(m):.3f}" for m in METHODS)


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", action="append", required=True, help="config name or folder; repeat")
    parser.add_argument("--long-stories", choices=("head", "windows"), default="windows")
    args = parser.parse_args()
    evaluate.logging.disable_progress_bar()
    wp_dev = next(s for s in rated_sets() if s.name.startswith("WP"))
    repeating = np.array([distinct_trigrams(story) < 1.0 for story in wp_dev.stories])
    human = wp_dev.human
    print(
        f"WP dev-300: {int(repeating.sum())} stories repeat a 3-gram (mean rating "
        f"{human[repeating].mean():.2f}), {int((~repeating).sum())} repeat none (mean rating "
        f"{human[~repeating].mean():.2f}).\n"
    )
    print(
        "| checkpoint | all (P / S / K) | mean score: repeating / none | AUC repeating over none "
        "| inside repeating (P / S / K) | inside none (P / S / K) |"
    )
    print("|---|---|---|---|---|---|")
    for checkpoint in args.checkpoint:
        scorer = scorer_for(checkpoint)
        scores = np.asarray(scorer.score(wp_dev.stories, long_stories=args.long_stories).scores, dtype=float)
        print(
            f"| {checkpoint} | {_cell(scores, human)} | {scores[repeating].mean():.3f} / "
            f"{scores[~repeating].mean():.3f} | {auc(scores[repeating], scores[~repeating]):.3f} | "
            f"{_cell(scores[repeating], human[repeating])} | {_cell(scores[~repeating], human[~repeating])} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
