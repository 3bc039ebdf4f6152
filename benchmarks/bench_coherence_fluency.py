"""coherence_fluency's speed and memory beside union's, on the same stories.

    python -m benchmarks.bench_coherence_fluency --reader outputs/reader   # 400 ROC + 100 whole WP stories
    python -m benchmarks.bench_coherence_fluency --reader outputs/reader --roc 2000 --wp 0 --repeat 3

``--reader`` is a fluency reader's folder with its ``fusion.json`` (no reader ships: see RESULTS).
Each metric runs in a fresh child process (so neither inherits the other's heap or warm caches):
it loads its defaults, scores the stories once to warm up, then ``--repeat`` times; the report
gives the best time, stories per second, and the child's peak resident memory. The stories are the
development suite's held-back human stories (``benchmarks.dev_split``: ROC, and WritingPrompts
stories whole), so both domains' lengths are in the mix. The target: coherence_fluency at least
half union's stories per second (it reads each story twice, once by UNION and once by sentences).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

from benchmarks.machine import describe_machine  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser

METRICS = ("union", "coherence_fluency")


def stories(roc: int, wp: int) -> list[str]:
    from benchmarks.dev_split import roc_stories, wp_rows
    from story_quality.training.corpora import writing_prompts_segments

    held_roc = roc_stories()[1][:roc]
    held_wp = ["\n".join(writing_prompts_segments(row["prompt"], row["story"])) for row in wp_rows()[1][:wp]]
    return held_roc + [text for text in held_wp if text]


def child(metric: str, reader: str, roc: int, wp: int, repeat: int, batch_size: int) -> dict:
    """One metric's figures, measured in this process (the child)."""
    from benchmarks.machine import peak_rss_mib, timed
    from story_quality.coherence_fluency.scorer import CoherenceFluencyScorer
    from story_quality.union.scorer import UnionScorer

    texts = stories(roc, wp)
    scorer = UnionScorer() if metric == "union" else CoherenceFluencyScorer(reader)
    options = {"batch_size": batch_size} | ({"long_stories": "windows"} if metric == "union" else {})
    scorer.score(texts[:16], **options)  # warm up
    seconds = timed(lambda: scorer.score(texts, **options), repeat=repeat)
    words = sum(len(text.split()) for text in texts)
    return {"metric": metric, "stories": len(texts), "words": words, "seconds": seconds,
            "stories_per_s": len(texts) / seconds, "peak_rss_mib": peak_rss_mib()}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reader", required=True, help="the fluency reader's folder, with its fusion.json")
    parser.add_argument("--roc", type=int, default=400, help="held-back ROC stories (default 400)")
    parser.add_argument(
        "--wp", type=int, default=100, help="held-back WritingPrompts stories, whole (default 100)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="timed calls per metric; the best is kept")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--child", choices=METRICS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.reader, args.roc, args.wp, args.repeat, args.batch_size)))
        return
    flags = ["--reader", args.reader, "--roc", str(args.roc), "--wp", str(args.wp), "--repeat", str(args.repeat), "--batch-size", str(args.batch_size)]  # fmt: skip
    results = {}
    for metric in METRICS:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_coherence_fluency", "--child", metric, *flags],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        results[metric] = json.loads(out.stdout.strip().splitlines()[-1])
    union, fused = results["union"], results["coherence_fluency"]
    lines = [
        f"`python -m benchmarks.bench_coherence_fluency --reader READER --roc {args.roc} --wp {args.wp} --repeat {args.repeat}`",
        "",
        describe_machine(),
        "",
        f"{union['stories']} stories ({union['words']} words), batch {args.batch_size}, best of {args.repeat}",
        "",
        "| metric | seconds | stories/s | peak memory (MiB) |",
        "|---|---|---|---|",
        *(
            f"| {r['metric']} | {r['seconds']:.2f} | {r['stories_per_s']:.1f} | {r['peak_rss_mib']:.0f} |"
            for r in (union, fused)
        ),
        "",
        f"coherence_fluency / union stories per second: {fused['stories_per_s'] / union['stories_per_s']:.2f} "
        "(target: at least 0.5)",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
