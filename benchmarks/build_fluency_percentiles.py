"""Write a sentence reader's percentile table (``percentiles.json``) into its folder.

    python -m benchmarks.build_fluency_percentiles outputs/slor-lm \\
        outputs/corpora/roc_train.txt outputs/corpora/wp_train.jsonl
    python -m benchmarks.build_fluency_percentiles outputs/reader-c3 \\
        outputs/corpora/roc_train.txt outputs/corpora/wp_train.jsonl

The human sentences are those of the corpora's held-out stories (:mod:`story_quality.training.fluency_corpus`:
one in 20, the (c) reader's validation stories, left out of the SLOR counts), at most
``--per-corpus`` of each corpus drawn at random, scored by the reader
(:mod:`story_quality.fluency.story_scores`); the table (:mod:`story_quality.fluency.percentiles`)
keeps each length bucket's scores.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections.abc import Sequence

import numpy as np

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.fluency.percentiles import PercentileTable
from story_quality.fluency.story_scores import sentence_scorer
from story_quality.training.fluency_corpus import corpus_sentences, split_held_out


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reader", type=pathlib.Path, help="a fluency reader's or a SLOR reader's folder")
    parser.add_argument("corpora", nargs="+", help="story files (.txt, .jsonl, .csv), one domain each")
    parser.add_argument("--per-corpus", type=int, default=6000, help="held-out sentences drawn per corpus")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--num-proc", type=int, default=None, help="processes that normalise the stories")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    score = sentence_scorer(args.reader)
    rng = np.random.default_rng(args.seed)
    drawn: list[str] = []
    counts: dict[str, int] = {}
    for path in args.corpora:
        _, held = split_held_out(corpus_sentences(path, num_proc=args.num_proc))
        sentences = [sentence for story in held for sentence in story]
        picked = rng.choice(len(sentences), size=min(args.per_corpus, len(sentences)), replace=False)
        drawn.extend(sentences[i] for i in sorted(picked.tolist()))
        counts[pathlib.Path(path).name] = len(picked)
    scores = score(drawn)
    described = f"{len(drawn)} human sentences of held-out stories ({', '.join(f'{n} of {k}' for k, n in counts.items())})"
    table = PercentileTable.build(scores, [len(s.split()) for s in drawn], described=described)
    path = table.write(args.reader)
    summary = {
        "wrote": str(path),
        "described": described,
        "sentences per bucket (at most words: count)": {
            str(bound): sum(table.bucket(len(s.split())) == i for s in drawn)
            for i, bound in enumerate(table.bounds)
        },
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    sys.exit(main())
