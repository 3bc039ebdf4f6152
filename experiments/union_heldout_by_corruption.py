"""Which corruptions can a trained UNION see? Held-out accuracy per corruption kind.

A UNION checkpoint's held-out accuracy mixes easy corruptions (a repeated sentence) with ones
the encoder may not see at all (a swapped keyword); only the second kind caps how confident
the metric can be on a flawless story. This reads a run of ``experiments.union_roc_offline.py``
(its ``pairs/`` and ``checkpoint/``), re-creates the held-out split that training used, scores
it with the ``union`` metric and prints, per kind, how many pairs, the mean score and the
share classified right (score above 0.5 for human stories, below for corrupted ones).

    python -m experiments.union_heldout_by_corruption outputs/union-minilm-norecon-k4-lr1e4
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
from collections import defaultdict
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import datasets  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.machine import describe_machine  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training.union_pairs import split_held_out  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402

HUMAN = "human story"
SEVERAL = "two or more techniques"


def corruption_kind(label: int, corruptions: Sequence[str]) -> str:
    """The row a pair belongs to: human, one technique (with its variant), or several."""
    if label == 1:
        return HUMAN
    techniques = {c.split(":")[0] for c in corruptions}
    if len(techniques) > 1:
        return SEVERAL
    return corruptions[0] if len(corruptions) == 1 else next(iter(techniques))


def accuracy_by_kind(
    scores: Sequence[float], labels: Sequence[int], corruptions: Sequence[Sequence[str]]
) -> list[tuple[str, int, float, float]]:
    """(kind, pairs, mean score, accuracy) per kind, most frequent first."""
    grouped: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for score, label, applied in zip(scores, labels, corruptions, strict=True):
        grouped[corruption_kind(label, applied)].append((score, label))
    rows = []
    for kind, members in grouped.items():
        s = np.array([m[0] for m in members])
        y = np.array([m[1] for m in members])
        rows.append((kind, len(members), float(s.mean()), float(((s > 0.5) == (y == 1)).mean())))
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def to_markdown(rows: Sequence[tuple[str, int, float, float]]) -> str:
    lines = ["| Held-out pairs | n | mean score | accuracy |", "|---|---|---|---|"]
    lines += [f"| {kind} | {n} | {mean:.3f} | {acc:.3f} |" for kind, n, mean, acc in rows]
    return "\n".join(lines)


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=pathlib.Path, help="an --output-dir of union_roc_offline.py")
    parser.add_argument("--validation-fraction", type=float, default=0.05, help="as in training (default)")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    run = json.loads((args.run_dir / "run.json").read_text())
    pairs = datasets.load_from_disk(str(args.run_dir / "pairs"))
    # training's seed (runs recorded before --train-seed existed trained with --seed)
    _, held_out = split_held_out(pairs, args.validation_fraction, run.get("train_seed", run["seed"]))
    if held_out is None:
        parser.error("--validation-fraction 0 holds nothing out")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    scores = (
        scorer_for(os.path.abspath(args.run_dir / "checkpoint"))
        .score(list(held_out["text"]), batch_size=args.batch_size, device=device)
        .scores
    )
    print(f"machine: {describe_machine()}")
    print(to_markdown(accuracy_by_kind(scores, held_out["label"], held_out["corruptions"])))


if __name__ == "__main__":
    main()
