"""How fast UNION's text preparation runs: per core, on worker processes, and inside the metric.

In one run, for human ROC stories (``roc-stories/stories.txt``) and whole WritingPrompts stories
(``wp-stories/stories.jsonl``), read as the checkpoint reads them (the shipped default: its
normalisation, its window, long stories in windows):

* **per core**: the serial preparation (:func:`~story_quality.union.encoding.encode` or
  :func:`~story_quality.union.windows.encode_windows`) in a child process held to one core, with
  the tokenizer's own threads off, best of ``--repeat`` in each of ``--rounds`` child processes
  (with ``--source``, the two checkouts' children take turns); with the sha256 of every id it made, so
  that two checkouts' encodings can be compared byte for byte. ``--source OTHER_CHECKOUT`` times
  that checkout's library too (a before/after in one run).
* **workers**: the same stories through :class:`~story_quality.union.preparation.PreparationWorkers`
  on 1 and on ``--workers`` processes (started and warmed before the clock), this process only
  waiting for them.
* **end to end**: ``UnionScorer.score`` on ``--end-to-end`` stories (ROC and WritingPrompts
  alternating) with ``num_workers=0`` and ``--workers``, on ``--device``.

    python -m benchmarks.bench_text_preparation
    python -m benchmarks.bench_text_preparation --source OTHER_CHECKOUT --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from benchmarks.machine import describe_machine
from benchmarks.shared_data import shared_data
from story_quality.cli.flag_spellings import ScriptParser

REPO = pathlib.Path(__file__).resolve().parents[1]
PARTS = ("per-core", "workers", "end-to-end")

# Runs in a child process on the library found first on its path: the serial preparation per domain.
PER_CORE = r"""
import hashlib, json, os, sys, time
settings = json.loads(sys.argv[1])
os.sched_setaffinity(0, {settings["core"]})
from story_quality.model_window import model_window
from story_quality.union.encoding import encode
from story_quality.union.scorer import UnionScorer
from story_quality.union.windows import encode_windows
scorer = UnionScorer(settings["checkpoint"])
window = model_window(scorer.tokenizer, scorer.model.config)
stories = json.loads(open(settings["stories"], encoding="utf-8").read())
figures = {"library": os.path.dirname(os.path.dirname(__import__("story_quality").__file__))}
for domain, texts in stories.items():
    best = float("inf")
    for _ in range(settings["repeat"]):
        started = time.perf_counter()
        if scorer.long_stories == "windows":
            encoded = encode_windows(scorer.tokenizer, texts, window, scorer.normalization)
        else:
            encoded = encode(scorer.tokenizer, texts, window, prepare=scorer.normalization)
        best = min(best, time.perf_counter() - started)
    digest = hashlib.sha256()
    for row in encoded.input_ids:
        digest.update(bytes(memoryview(__import__("array").array("i", row))) + b"|")
    digest.update(repr(list(encoded.story_of or [])).encode() + repr(encoded.truncated).encode())
    figures[domain] = {"stories_per_s": len(texts) / best, "seconds": best, "sha256": digest.hexdigest()}
print(json.dumps(figures))
"""


def load_stories(roc: int, wp: int) -> dict[str, list[str]]:
    """The first ``roc`` human ROC stories and ``wp`` whole WritingPrompts stories."""
    roc_lines = [line for line in shared_data("roc-stories", "stories.txt").read_text().splitlines() if line]
    with shared_data("wp-stories", "stories.jsonl").open(encoding="utf-8") as source:
        wp_stories = [json.loads(line)["story"] for _, line in zip(range(wp), source, strict=False)]
    return {"roc": roc_lines[:roc], "wp": wp_stories}


def per_core(source: pathlib.Path, stories_file: str, args: argparse.Namespace) -> dict:
    """The serial preparation of ``source``'s library, in a child process held to one core."""
    settings = {
        "core": args.core,
        "checkpoint": args.checkpoint,
        "stories": stories_file,
        "repeat": args.repeat,
    }
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(source))
    run = subprocess.run(
        [sys.executable, "-c", PER_CORE, json.dumps(settings)],
        env=env,
        cwd=source,  # the working directory comes first on the child's path
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(f"the per-core run of {source} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def on_workers(scorer, stories: dict[str, list[str]], count: int, repeat: int) -> dict[str, float]:
    """Stories/s of each domain prepared by ``count`` workers, started and warmed before the clock."""
    from story_quality.model_window import model_window
    from story_quality.union.preparation import PreparationWorkers

    window = model_window(scorer.tokenizer, scorer.model.config)
    workers = PreparationWorkers(scorer.tokenizer, scorer.normalization, count)
    try:
        warm = [stories["roc"][0]] * count
        list(workers.chunks(warm, window, scorer.long_stories, chunk_size=1))
        rates = {}
        for domain, texts in stories.items():
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                for _ in workers.chunks(texts, window, scorer.long_stories, chunk_size=64):
                    pass
                best = min(best, time.perf_counter() - started)
            rates[domain] = len(texts) / best
        return rates
    finally:
        workers.close()


def end_to_end(
    scorer, stories: dict[str, list[str]], count: int, workers: int, device: str
) -> dict[str, float]:
    """The metric's stories/s on ``count`` stories, ROC and WritingPrompts alternating, with and
    without workers (each warmed by a first call of its own)."""
    mixed = [text for pair in zip(stories["roc"], stories["wp"], strict=False) for text in pair]
    mixed = (mixed * (count // max(1, len(mixed)) + 1))[:count]
    rates = {}
    for num_workers in (0, workers):
        scorer.score(mixed[:8], num_workers=num_workers, device=device)
        started = time.perf_counter()
        scorer.score(mixed, num_workers=num_workers, device=device)
        rates[f"num_workers={num_workers}"] = count / (time.perf_counter() - started)
    return rates


def parse_args() -> argparse.Namespace:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roc", type=int, default=2000, help="ROC stories (default 2,000)")
    parser.add_argument("--wp", type=int, default=300, help="whole WritingPrompts stories (default 300)")
    parser.add_argument(
        "--workers", type=int, default=2, help="worker processes to compare with one (default 2)"
    )
    parser.add_argument("--end-to-end", type=int, default=400, help="stories the metric scores (default 400)")
    parser.add_argument(
        "--repeat", type=int, default=2, help="timed runs of each, the best counts (default 2)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="per-core runs of each checkout, in turns (default 3)"
    )
    parser.add_argument(
        "--core", type=int, default=0, help="the core the per-core runs are held to (default 0)"
    )
    parser.add_argument(
        "--checkpoint", default="default", help="the UNION checkpoint (default: the shipped one)"
    )
    parser.add_argument("--device", default="cpu", help="where the end-to-end metric runs (default cpu)")
    parser.add_argument(
        "--source", type=pathlib.Path, help="another checkout whose per-core rate is timed too"
    )
    parser.add_argument("--output", type=pathlib.Path, help="also write the figures here as JSON")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="what to time (default: all); per-core alone keeps to one core",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    stories = load_stories(args.roc, args.wp)
    figures: dict = {"machine": describe_machine(), "stories": {k: len(v) for k, v in stories.items()}}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(stories, handle)
    try:
        if "per-core" in args.parts:
            per_core_figures(figures, stories, handle.name, args)
    finally:
        os.unlink(handle.name)
    if "workers" in args.parts or "end-to-end" in args.parts:
        other_figures(figures, stories, args)
    print(json.dumps(figures, indent=2))
    if args.output:
        args.output.write_text(json.dumps(figures, indent=2) + "\n")


def per_core_figures(
    figures: dict, stories: dict[str, list[str]], stories_file: str, args: argparse.Namespace
) -> None:
    """This checkout's per-core rates, and ``--source``'s beside them with the speed-up and whether
    the two made the same bytes."""
    sides = {"per_core": REPO} | ({} if args.source is None else {"per_core_source": args.source.resolve()})
    for _ in range(args.rounds):  # the two checkouts in turns, so that a busy spell costs both alike
        for side, source in sides.items():
            run = per_core(source, stories_file, args)
            best = figures.setdefault(side, run)
            for domain in stories:
                if run[domain]["stories_per_s"] > best[domain]["stories_per_s"]:
                    best[domain] = run[domain]
    if args.source is not None:
        for domain in stories:
            after, before = figures["per_core"][domain], figures["per_core_source"][domain]
            figures[f"{domain}_per_core_speedup"] = after["stories_per_s"] / before["stories_per_s"]
            figures[f"{domain}_same_bytes_as_source"] = after["sha256"] == before["sha256"]


def other_figures(figures: dict, stories: dict[str, list[str]], args: argparse.Namespace) -> None:
    """Stories/s on 1 and ``--workers`` workers, and the metric end to end with and without them."""
    from story_quality.union.scorer import UnionScorer

    scorer = UnionScorer(args.checkpoint)
    if "workers" in args.parts:
        one = on_workers(scorer, stories, 1, args.repeat)
        many = on_workers(scorer, stories, args.workers, args.repeat)
        figures["workers"] = {"1": one, str(args.workers): many}
        figures["workers_speedup"] = {domain: many[domain] / one[domain] for domain in stories}
    if "end-to-end" in args.parts:
        figures["end_to_end"] = end_to_end(scorer, stories, args.end_to_end, args.workers, args.device)


if __name__ == "__main__":
    main()
