"""Stories/s of ``story-quality score`` on 1 and 2 processes against a direct ``compute`` call.

    python -m benchmarks.cli_speed                         # 20,000 ROC + 5,000 WP-length stories
    python -m benchmarks.cli_speed --roc 2000 --wp 500     # a quicker look

The stories are human ROC stories (``roc-stories/stories.txt``) and WritingPrompts stories cut
to about 200 words (``wp-stories/stories.jsonl``), repeated to the counts asked for, scored with
the shipped default. Each way runs in a fresh process, so model loading is counted alike; the
CLI's scores are checked against the direct call's. Peak memory (all processes of a way together,
sampled every 50 ms) is printed beside its time.
"""

from __future__ import annotations

import argparse
import itertools
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

DIRECT = """
import json, os, resource, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
import evaluate
from story_quality import metric_path
evaluate.logging.disable_progress_bar()
stories = [line.rstrip("\\n") for line in open(sys.argv[1], encoding="utf-8")]
start = time.perf_counter()
scores = evaluate.load(metric_path("union")).compute(predictions=stories, batch_size=int(sys.argv[3]))["scores"]
elapsed = time.perf_counter() - start
json.dump({"seconds": elapsed, "scores": scores}, open(sys.argv[2], "w"))
"""


def stories(roc: int, wp: int) -> list[str]:
    from story_quality.training.corpora import writing_prompts_text

    roc_lines = [line for line in shared_data("roc-stories", "stories.txt").read_text().splitlines() if line]
    with shared_data("wp-stories", "stories.jsonl").open(encoding="utf-8") as source:
        rows = [json.loads(line) for line in source]
    wp_texts = [t for row in rows if (t := writing_prompts_text(row["prompt"], row["story"]))]
    wp_texts = [" ".join(t.split()) for t in wp_texts]
    return list(itertools.islice(itertools.cycle(roc_lines), roc)) + list(
        itertools.islice(itertools.cycle(wp_texts), wp)
    )


def tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and all its descendants (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            pages = int((entry / "statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(int(stat[1]), []).append(int(entry.name))
        rss[int(entry.name)] = pages * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds of ``command`` and the peak resident memory (MiB) of its process tree (sampled every 50 ms)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while child.poll() is None:
        peak = max(peak, tree_rss_bytes(child.pid))
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{' '.join(command[:6])} ... failed with status {child.returncode}")
    return elapsed, peak / 2**20


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roc", type=int, default=20000, help="ROC stories (20000)")
    parser.add_argument("--wp", type=int, default=5000, help="WritingPrompts-length stories (5000)")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    texts = stories(args.roc, args.wp)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        source = folder / "stories.txt"
        source.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        direct_out = folder / "direct.json"
        seconds, peak = timed(
            [sys.executable, "-c", DIRECT, str(source), str(direct_out), str(args.batch_size)]
        )
        rows.append(("direct compute (whole process)", seconds, peak))
        direct = json.loads(direct_out.read_text())["scores"]
        for processes in (1, 2):
            output = folder / f"cli-{processes}.jsonl"
            command = [
                sys.executable, "-m", "accelerate.commands.launch", "--quiet", "--cpu",
                "--num_processes", str(processes), "--num_machines", "1", "--mixed_precision", "no",
                "--dynamo_backend", "no", "--num_cpu_threads_per_process", str(max(1, os.cpu_count() // processes)),
                "-m", "story_quality", "score", "--metric", "union", "--input", str(source),
                "--output", str(output), "--batch-size", str(args.batch_size),
            ]  # fmt: skip
            seconds, peak = timed(command)
            scored = [json.loads(line)["union"] for line in output.read_text().splitlines()]
            worst = max(abs(a - b) for a, b in zip(scored, direct, strict=True))
            rows.append(
                (
                    f"story-quality score, {processes} process(es) (largest score difference {worst:.1e})",
                    seconds,
                    peak,
                )
            )
    print(f"`python -m benchmarks.cli_speed --roc {args.roc} --wp {args.wp}`\n\n{describe_machine()}\n")
    print(
        f"| {len(texts):,} stories ({args.roc:,} ROC + {args.wp:,} WP-length) | seconds | stories/s | peak MiB |"
    )
    print("|---|---|---|---|")
    for name, seconds, peak in rows:
        print(f"| {name} | {seconds:.1f} | {len(texts) / seconds:.1f} | {peak:.0f} |")
    overhead = rows[1][1] / rows[0][1] - 1
    print(f"\nCLI overhead on one process: {overhead:+.1%} of the direct call's time")


if __name__ == "__main__":
    main()
