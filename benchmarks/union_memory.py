"""Peak memory of the `union` metric on many long stories: it must follow the batch, not the call.

Each run scores N stories of W words (ROC stories strung together, so names and punctuation are
real) with the shipped default, in a fresh child process so that no run inherits
another's heap. A thread samples the resident set every 10 ms; the report gives the memory the
stories themselves take, the resident set before the call, its peak during the call, what the call
added, the time, and how many truncation warnings were raised (one is expected).

    python -m benchmarks.union_memory                           # 2,000 and 20,000 stories of 2,000 words
    python -m benchmarks.union_memory --runs 2000x2000 --ways metric naive
    python -m benchmarks.union_memory --runs 20000x200 --batch-size 64

Ways of scoring: ``metric`` is ``union.compute(predictions=stories)``; ``add_batch`` feeds the same
stories through ``evaluate``'s own path (``add_batch`` then ``compute()``, which stores them in an
Arrow file and reads them back); ``naive`` is the obvious implementation the metric replaced:
normalise every story, then tokenise them all in one call, then score.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import evaluate  # noqa: E402
import torch  # noqa: E402

from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.shared_data import shared_data_dir  # noqa: E402
from story_quality import metric_path  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.model_window import model_window  # noqa: E402
from story_quality.union.encoding import Encoded  # noqa: E402
from story_quality.union.inference import class_probabilities  # noqa: E402

MIB = 2**20
WAYS = ("metric", "add_batch", "naive")
FALLBACK_WORDS = "the a he she went to store home friend dog day was very happy sad decided bought".split()


def resident_bytes() -> int:
    """This process's resident set now (Linux ``/proc``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakSampler:
    """Samples the resident set every ``interval`` seconds in a thread; ``peak`` is the highest seen."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval, self.peak = interval, resident_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, resident_bytes())

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, resident_bytes())


def long_stories(n: int, words: int, seed: int = 0) -> list[str]:
    """``n`` distinct stories of about ``words`` words: random ROC references strung together."""
    source = shared_data_dir() / "union-roc" / "reference.txt"
    rng = random.Random(seed)
    if source.exists():
        pieces = [line.strip() for line in source.read_text().splitlines() if line.strip()]
    else:
        pieces = [
            " . ".join(" ".join(rng.choices(FALLBACK_WORDS, k=9)) for _ in range(5)) + " ."
            for _ in range(500)
        ]
    lengths = [len(p.split()) for p in pieces]
    stories = []
    for _ in range(n):
        parts, count = [], 0
        while count < words:
            i = rng.randrange(len(pieces))
            parts.append(pieces[i])
            count += lengths[i]
        stories.append(" ".join(parts))
    return stories


def naive_scores(metric, stories: list[str], batch_size: int) -> list[float]:
    """The obvious way: every story normalised, then all tokenised in one call, then scored."""
    scorer = metric.scorer
    window = model_window(scorer.tokenizer, scorer.model.config)
    prepared = [scorer.normalization(s) for s in stories]
    ids = scorer.tokenizer(prepared, truncation=True, max_length=window)["input_ids"]
    return class_probabilities(
        scorer.logits_fn,
        Encoded(input_ids=ids, truncated=[], max_length=window),
        label_index=scorer.label_index,
        pad_id=scorer.tokenizer.pad_token_id,
        batch_size=batch_size,
        device=torch.device("cpu"),
    )


def one_run(stories_n: int, words: int, way: str, batch_size: int, checkpoint: str) -> dict:
    """Runs in the child process: load, build the stories, score them once, measure."""
    evaluate.logging.disable_progress_bar()
    metric = evaluate.load(metric_path("union"), checkpoint)
    metric.compute(predictions=["Ken went to the store. He bought milk. He went home."])  # first-call setup
    loaded = resident_bytes()
    stories = long_stories(stories_n, words)
    text_bytes = sum(len(s.encode()) for s in stories)
    before = resident_bytes()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, PeakSampler() as sampler:
        warnings.simplefilter("always")
        if way == "metric":
            scores = metric.compute(predictions=stories, batch_size=batch_size)["scores"]
        elif way == "add_batch":
            metric.add_batch(predictions=stories)
            scores = metric.compute(batch_size=batch_size)["scores"]
        else:
            scores = naive_scores(metric, stories, batch_size)
    seconds = time.perf_counter() - start
    return {
        "stories": stories_n,
        "words": words,
        "way": way,
        "batch_size": batch_size,
        "text_mib": text_bytes / MIB,
        "loaded_mib": loaded / MIB,
        "before_mib": before / MIB,
        "peak_mib": sampler.peak / MIB,
        "added_mib": (sampler.peak - before) / MIB,
        "seconds": seconds,
        "truncation_warnings": sum("longer than the model's window" in str(w.message) for w in caught),
        "scores_in_0_1": sum(0.0 <= s <= 1.0 for s in scores),
    }


def parse_run(text: str) -> tuple[int, int]:
    try:
        stories, words = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a run is STORIESxWORDS, like 20000x2000; got {text!r}") from None
    if stories < 1 or words < 1:
        raise argparse.ArgumentTypeError(f"stories and words must be positive; got {text!r}")
    return stories, words


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--runs",
        nargs="+",
        type=parse_run,
        default=[(2000, 2000), (20000, 2000)],
        metavar="NxW",
        help="runs as STORIESxWORDS (default: 2000x2000 20000x2000)",
    )
    parser.add_argument(
        "--ways", nargs="+", choices=WAYS, default=["metric"], help="how to score (default: metric)"
    )
    parser.add_argument("--batch-size", type=int, default=32, help="stories per forward pass (default 32)")
    parser.add_argument("--checkpoint", default="default", help="the metric's config name or a folder")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        stories_n, words, way = int(args.child[0]), int(args.child[1]), args.child[2]
        print(json.dumps(one_run(stories_n, words, way, args.batch_size, args.checkpoint)))
        return

    print(describe_machine())
    header = (
        "| stories | words | way | stories' text MiB | RSS before MiB | peak MiB | added MiB | s | warnings |"
    )
    print(header)
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    rows = []
    for stories_n, words in args.runs:
        for way in args.ways:
            command = [
                sys.executable,
                "-m",
                "benchmarks.union_memory",
                "--child",
                str(stories_n),
                str(words),
                way,
                "--batch-size",
                str(args.batch_size),
                "--checkpoint",
                args.checkpoint,
            ]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"the run {stories_n}x{words} ({way}) failed:\n{done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(
                f"| {row['stories']:,} | {row['words']:,} | {way} | {row['text_mib']:.0f} | {row['before_mib']:.0f} "
                f"| {row['peak_mib']:.0f} | {row['added_mib']:.0f} | {row['seconds']:.0f} "
                f"| {row['truncation_warnings']} |",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": describe_machine(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
