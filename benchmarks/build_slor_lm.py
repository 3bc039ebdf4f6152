"""Count reader (b)'s trigram model: the SLOR reader's tables, from the human stories of the corpora.

    python -m benchmarks.dev_split --output-dir outputs/corpora
    python -m benchmarks.build_slor_lm outputs/corpora/roc_train.txt outputs/corpora/wp_train.jsonl \\
        --output-dir outputs/slor-lm

Each corpus is read as the fluency readers read it (:mod:`story_quality.training.fluency_corpus`: every
story as its normalised sentences, WritingPrompts whole in segments); the held-out stories (one in
20, the (c) reader's validation stories) are left out of the counts, so the percentile table
(``benchmarks.build_fluency_percentiles``) places SLOR among sentences the model never counted;
the development suite's stories are in no training corpus (``benchmarks.dev_split``). Writes
``slor.json`` and ``slor_counts.npz`` (:mod:`story_quality.fluency.slor`: the smoothing).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections.abc import Sequence

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.fluency.slor import SlorModel
from story_quality.training.fluency_corpus import corpus_sentences, split_held_out


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", help="story files (.txt, .jsonl, .csv), one domain each")
    parser.add_argument("--output-dir", type=pathlib.Path, required=True)
    parser.add_argument("--num-proc", type=int, default=None, help="processes that normalise the stories")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    counted: list[str] = []
    described: dict[str, object] = {}
    for path in args.corpora:
        kept, held = split_held_out(corpus_sentences(path, num_proc=args.num_proc))
        sentences = [sentence for story in kept for sentence in story]
        counted.extend(sentences)
        described[pathlib.Path(path).name] = {
            "stories counted": len(kept),
            "stories held out": len(held),
            "sentences": len(sentences),
            "words": sum(len(sentence.split()) for sentence in sentences),
        }
    model = SlorModel.count(counted)
    summary = {
        "corpora": described,
        "vocabulary": model.size,
        "trigrams": len(model.tables["trigram_keys"]),
        "seconds": round(time.perf_counter() - start, 1),
    }
    model.write(args.output_dir, {"built": summary})
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    sys.exit(main())
