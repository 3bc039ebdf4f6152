"""Build the fluency reader's training set: human story sentences against an n-gram model's sentences.

Example (run (c3)'s data, ``benchmarks/log/2026-12-07-fluency-reader.md``; the corpora from
``python -m benchmarks.dev_split``)::

    python training/build_fluency_data.py outputs/corpora/roc_train.txt outputs/corpora/wp_train.jsonl \\
        --sentences 50000 --output-dir outputs/fluency-data

Each corpus file is one domain: its stories (WritingPrompts stories whole, in segments) are
normalised into sentences as the reader sees them, two n-gram models are fitted on its halves,
and ``--sentences`` of its human sentences are each paired with a generated one
(``training/negatives/garbled_sentences.py``); with ``--candidates N --hard-negatives-from READER``
the one of N that a first reader scores most human. One story in ``--validation-every`` goes to the
validation split, with its sentences. The summary is printed as JSON and saved beside the data.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import sys
from collections.abc import Sequence

import datasets
import numpy as np

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.fluency.reader import FluencyReader
from story_quality.training.cli_types import at_least
from story_quality.training.fluency_corpus import HELD_OUT_EVERY, WP_SEGMENTS, corpus_sentences, is_held_out
from story_quality.training.negatives.garbled_sentences import GarbleOptions, fold_models, sentence_pairs

logger = logging.getLogger(__name__)
SUMMARY_FILE = "fluency_build_summary.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", help="story files (.txt, .jsonl, .csv), one domain each")
    parser.add_argument(
        "--sentences",
        type=at_least(1),
        default=60000,
        help="human sentences drawn per corpus (each gets a pair)",
    )
    parser.add_argument(
        "--segments", type=at_least(1), default=WP_SEGMENTS, help="WritingPrompts segments kept per story"
    )
    parser.add_argument("--validation-every", "--validation_every", type=at_least(2), default=HELD_OUT_EVERY,
                        help="one story in N goes to the validation split")  # fmt: skip
    parser.add_argument("--candidates", type=at_least(1), default=1,
                        help="generated sentences drawn per human one; with --hard-negatives-from, the one "
                        "that reader scores most human is kept (else the first)")  # fmt: skip
    parser.add_argument("--hard-negatives-from", "--hard_negatives_from", type=pathlib.Path, default=None,
                        help="a fluency reader (a first run) that picks the hardest of the candidates")  # fmt: skip
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--num-proc", "--num_proc", type=at_least(1), default=None,
                        help="processes that normalise the stories")  # fmt: skip
    parser.add_argument("--output-dir", "--output_dir", type=pathlib.Path, required=True)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    options = GarbleOptions()
    choose = None
    if args.hard_negatives_from is not None:
        reader = FluencyReader(args.hard_negatives_from)

        def choose(found: Sequence[Sequence[str]]) -> list[int]:
            return [int(np.argmax(logits)) for logits in reader.group_logits(found, batch_size=256)]

    splits: dict[str, list[dict[str, object]]] = {"train": [], "validation": []}
    summary: dict[str, object] = {
        "options": {"history_weights": options.history_weights, "candidates": args.candidates},
        "hard_negatives_from": str(args.hard_negatives_from) if args.hard_negatives_from else None,
        "seed": args.seed,
    }
    for number, path in enumerate(args.corpora):
        stories = corpus_sentences(path, args.segments, args.num_proc)
        logger.info("%s: %d stories; fitting the n-gram models of its two halves", path, len(stories))
        models = fold_models(stories, options)
        human = frozenset(sentence for story in stories for sentence in story)
        rows = sentence_pairs(
            stories, args.sentences, models, options, args.seed + number, human, args.candidates, choose
        )
        for row in rows:
            row["domain"] = pathlib.Path(path).stem
            held = is_held_out(int(row["story"]), args.validation_every)  # type: ignore[call-overload]
            splits["validation" if held else "train"].append(row)
        summary[path] = {"stories": len(stories), "pairs": len(rows) // 2}
        del models
    data = datasets.DatasetDict({name: datasets.Dataset.from_list(rows) for name, rows in splits.items()})
    data["train"] = data["train"].shuffle(seed=args.seed)
    summary["rows"] = {name: len(split) for name, split in data.items()}
    args.output_dir.mkdir(parents=True, exist_ok=True)
    data.save_to_disk(args.output_dir)
    (args.output_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    sys.exit(main() and 0)
