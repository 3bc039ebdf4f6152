"""Speed of UNION's negative sampling: stories per second per core, and a 90k-story extrapolation.

Runs the whole pipeline (:func:`training.negatives.build.build_union_dataset`: normalise,
tag, count keywords, corrupt, pair) on a file of stories, one per line, for each
``--num-proc``, then times the stages one by one in a single process to show where the time
goes. The default input is the 4,909 ROCStories test stories of UNION's release::

    python -m benchmarks.bench_negative_sampling
    python -m benchmarks.bench_negative_sampling --stories-file my.txt --num-proc 1 2 4 --wordnet none
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import datasets

from benchmarks.machine import describe_machine, timed
from benchmarks.shared_data import shared_data_dir
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training.negatives.build import (
    DatasetDonors,
    as_story,
    build_union_dataset,
    count_keywords,
    prepare_batch,
)
from story_quality.training.negatives.corruptions import CorruptionContext, StoryRandom, corrupt
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.union.normalization import ROC_STORIES

DEFAULT_STORIES = shared_data_dir() / "union-roc" / "reference.txt"
ROC_TRAIN_STORIES = 90_000


def parse_args() -> argparse.Namespace:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--stories-file", type=pathlib.Path, default=DEFAULT_STORIES, help="one story per line"
    )
    parser.add_argument(
        "--num-proc", type=int, nargs="+", default=[1, 2], help="worker counts to time (default: 1 2)"
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs per setting; the best is kept (default: 2)"
    )
    parser.add_argument("--target", type=int, default=ROC_TRAIN_STORIES, help="corpus size to extrapolate to")
    parser.add_argument("--tagger", default="auto", choices=["auto", "nltk", "heuristic"])
    parser.add_argument("--wordnet", default="auto", choices=["auto", "nltk", "debian", "none"])
    parser.add_argument("--output", type=pathlib.Path, help="also write the figures here as JSON")
    return parser.parse_args()


def stage_times(texts: list[str], lexicon: Lexicon) -> dict[str, float]:
    """Seconds per stage for the whole file, in one process (no datasets overhead)."""
    start = time.perf_counter()
    normalised = [ROC_STORIES.sentences(text) for text in texts]
    normalise = time.perf_counter() - start
    start = time.perf_counter()
    for sentences in normalised:
        for sentence in sentences:
            lexicon.tag(sentence.split(" "))
    tag = time.perf_counter() - start
    batch = prepare_batch(
        {"text": texts},
        list(range(len(texts))),
        text_column="text",
        normalization=ROC_STORIES,
        lexicon=lexicon,
        min_sentences=3,
    )
    prepared = datasets.Dataset.from_dict(batch).filter(lambda reason: reason == "", input_columns="skip")
    start = time.perf_counter()
    keywords = count_keywords(prepared, lexicon)
    count = time.perf_counter() - start
    donors = DatasetDonors(prepared)
    rows = prepared.to_list()
    start = time.perf_counter()
    for row in rows:
        ctx = CorruptionContext(
            lexicon=lexicon, keywords=keywords, donors=donors, story_index=row["story_index"]
        )
        corrupt(as_story(row["sentences"], row["tags"]), StoryRandom(42, row["story_index"]), ctx)
    corrupting = time.perf_counter() - start
    return {
        "normalise (story_quality.union.normalization)": normalise,
        "POS tag": tag,
        "count keywords": count,
        "corrupt": corrupting,
    }


def main() -> None:
    args = parse_args()
    if not args.stories_file.is_file():
        raise SystemExit(f"stories file not found: {args.stories_file} (pass --stories-file)")
    texts = args.stories_file.read_text(encoding="utf-8").splitlines()
    datasets.disable_progress_bars()
    datasets.disable_caching()
    lexicon = Lexicon(tagger=args.tagger, wordnet=args.wordnet).resolve()
    print(f"machine: {describe_machine()}; load average {os.getloadavg()[0]:.1f} at start")
    print(f"stories: {len(texts)} from {args.stories_file}; lexicon: {lexicon.describe()}")
    build_union_dataset(
        datasets.Dataset.from_dict({"text": texts[:50]}), lexicon=lexicon
    )  # warm-up (WordNet load)
    results = {
        "machine": describe_machine(),
        "stories": len(texts),
        "lexicon": lexicon.describe(),
        "runs": [],
    }
    for num_proc in args.num_proc:
        stories = datasets.Dataset.from_dict({"text": texts})
        seconds = timed(
            lambda stories=stories, num_proc=num_proc: build_union_dataset(
                stories, num_proc=num_proc if num_proc > 1 else None, lexicon=lexicon
            ),
            repeat=args.repeat,
        )
        rate = len(texts) / seconds
        run = {
            "num_proc": num_proc,
            "seconds": round(seconds, 2),
            "stories_per_second": round(rate, 1),
            "stories_per_second_per_core": round(rate / num_proc, 1),
            f"extrapolated_minutes_for_{args.target}": round(args.target / rate / 60, 2),
        }
        results["runs"].append(run)
        print(
            f"num_proc={num_proc}: {seconds:.2f} s, {rate:.0f} stories/s, {rate / num_proc:.0f} stories/s/core, "
            f"{args.target:,} stories in about {args.target / rate / 60:.1f} min"
        )
    stages = stage_times(texts, lexicon)
    results["stages_seconds_single_process"] = {k: round(v, 2) for k, v in stages.items()}
    print("stages in one process: " + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))
    print(f"load average {os.getloadavg()[0]:.1f} at the end (other processes share these cores)")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
