"""How should the windows of a long story make one score? Mean, length-weighted mean, geometric mean, minimum.

The ``union`` metric's ``long_stories="windows"`` scores each window of a story and takes the
mean weighted by window length. This study scores every window once per checkpoint and prints,
for each way of combining them, what the development suite measures on the two sets whose
stories are longer than a window: the correlation with people on the MANPLTS WritingPrompts
stories (WP dev-300, 122-2,115 words) and the held-back human WritingPrompts stories, whole,
against one corrupted copy each (pair accuracy, human mean).

    python -m experiments.union_window_aggregation --checkpoint default --checkpoint outputs/union-seg2
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import evaluate  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.dev_sets import pair_sets, rated_sets  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.correlation import METHODS, correlate  # noqa: E402
from story_quality.union.inference import class_probabilities  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402
from story_quality.union.windows import encode_windows  # noqa: E402

Combine = Callable[[np.ndarray, np.ndarray], float]
COMBINE: dict[str, Combine] = {
    "first window (head)": lambda p, n: float(p[0]),
    "mean": lambda p, n: float(p.mean()),
    "length-weighted mean (shipped)": lambda p, n: float(np.average(p, weights=n)),
    "geometric mean": lambda p, n: float(np.exp(np.log(np.clip(p, 1e-6, 1)).mean())),
    "minimum": lambda p, n: float(p.min()),
}


def window_scores(metric, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each text's window probabilities and window lengths, as the metric computes them."""
    encoded = encode_windows(metric.tokenizer, texts, 256, metric.normalization)
    probs = class_probabilities(
        metric.logits_fn, encoded, metric.label_index, metric.tokenizer.pad_token_id, 32, torch.device("cpu")
    )
    per: list[list[tuple[float, int]]] = [[] for _ in texts]
    for story, p, row in zip(encoded.story_of, probs, encoded.input_ids, strict=True):
        per[story].append((p, len(row)))
    return [(np.array([p for p, _ in w]), np.array([n for _, n in w])) for w in per]


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", action="append", required=True, help="config name or folder; repeat")
    args = parser.parse_args()
    evaluate.logging.disable_progress_bar()
    wp_dev = next(s for s in rated_sets() if s.name.startswith("WP"))
    whole = next(p for p in pair_sets() if p.name.startswith("WP whole"))
    print("| checkpoint | combination | WP dev-300 (P / S / K) | WP whole-story pairs | human mean |")
    print("|---|---|---|---|---|")
    for checkpoint in args.checkpoint:
        metric = scorer_for(checkpoint)
        rated = window_scores(metric, wp_dev.stories)
        human, corrupted = window_scores(metric, whole.human), window_scores(metric, whole.corrupted)
        for label, combine in COMBINE.items():
            measured = correlate(np.array([combine(p, n) for p, n in rated]), wp_dev.human)
            h = np.array([combine(p, n) for p, n in human])
            c = np.array([combine(p, n) for p, n in corrupted])
            cells = " / ".join(f"{measured.coefficient(m):.3f}" for m in METHODS)
            print(f"| {checkpoint} | {label} | {cells} | {(h > c).mean():.3f} | {h.mean():.3f} |", flush=True)


if __name__ == "__main__":
    main()
