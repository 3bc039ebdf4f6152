"""GRUEN's redundancy rules with their shortcuts against the plain rules: same scores, time of each.

The plain rules run ``difflib``'s longest common run (characters and words) and the full edit
distance on every sentence pair; ``story_quality.gruen.redundancy`` skips ``difflib`` where a
substring search settles a flag and the edit distance where the lengths do. Both score every
text of a sample (ROC and WritingPrompts stories, split as the metric splits them), taking turns
round by round; the scores must be equal, and the best time of each and the median ratio per
round are printed.

    python -m experiments.redundancy_rules [--texts 200] [--rounds 9]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence

from benchmarks.shared_data import shared_data
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.gruen import redundancy
from story_quality.gruen.sentences import text_to_sentences


def plain_score(sentences: Sequence[str]) -> float:
    """``redundancy_score`` with both shortcuts replaced by their plain rules: ``difflib`` and the full
    edit distance on every pair."""
    shortcuts = redundancy.shares_long_run, redundancy.edit_distance_below
    redundancy.shares_long_run = lambda a, b: (
        redundancy.longest_common_run(a, b) > redundancy.SHARED_FRACTION * min(len(a), len(b))
    )
    redundancy.edit_distance_below = lambda a, b, limit: redundancy.edit_distance(a, b) < limit
    try:
        return redundancy.redundancy_score(sentences)
    finally:
        redundancy.shares_long_run, redundancy.edit_distance_below = shortcuts


def _seconds(score: Callable[[Sequence[str]], float], texts: list[list[str]]) -> float:
    started = time.perf_counter()
    for sentences in texts:
        score(sentences)
    return time.perf_counter() - started


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=200, help="stories sampled from each set (seed 0)")
    parser.add_argument("--rounds", type=int, default=9, help="turns each side takes")
    args = parser.parse_args()
    print("| texts | sentence pairs | plain rules, best | with shortcuts, best | median ratio |")
    print("|---|---|---|---|---|")
    for folder in ("union-roc", "union-wp"):
        lines = [
            line for line in shared_data(folder, "reference.txt").read_text().splitlines() if line.strip()
        ]
        texts = [text_to_sentences(text) for text in random.Random(0).sample(lines, args.texts)]
        if [plain_score(s) for s in texts] != [redundancy.redundancy_score(s) for s in texts]:
            raise SystemExit(f"{folder}: the shortcuts changed a score")
        pairs = sum(len(s) * (len(s) - 1) // 2 for s in texts)
        plain, fast = [], []
        for _ in range(args.rounds):
            plain.append(_seconds(plain_score, texts))
            fast.append(_seconds(redundancy.redundancy_score, texts))
        ratio = statistics.median(f / p for f, p in zip(fast, plain, strict=True))
        print(f"| {folder} | {pairs:,} | {min(plain):.3f} s | {min(fast):.3f} s | {ratio:.2f} |")


if __name__ == "__main__":
    main()
