"""Wall time of ``story-quality meta-evaluate`` on 500 rated stories and two metrics.

    python -m benchmarks.meta_evaluate_speed                       # default resamples, 3 runs
    python -m benchmarks.meta_evaluate_speed --runs 1 --resamples 200

The ratings are the MANS-ROC development half (``dev-annotations/mans_roc_dev.jsonl``: 500
stories, five systems). The two metrics are scores any machine can make without a model, each
text's length in words and its distinct 3-gram ratio, written as score files keyed by the
ratings' id: the command's work does not depend on what the scores are, only on how many. Each
run is a fresh process (``python -m story_quality meta-evaluate``), so start-up is counted; the
JSON report of every run must be identical (the same seed gives the same figures). Prints the
machine, each run's wall time and the median.
"""

from __future__ import annotations

import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.machine import describe_machine
from benchmarks.shared_data import shared_data
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation import meta_figures, significance


def write_inputs(folder: pathlib.Path) -> tuple[pathlib.Path, list[pathlib.Path]]:
    """The ratings file and the two metrics' score files."""
    ratings = shared_data("dev-annotations") / "mans_roc_dev.jsonl"
    rows = [json.loads(line) for line in ratings.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [row["text"] for row in rows]
    scores = []
    for name, values in (
        ("length", meta_figures.length_scores(texts)),
        ("distinct_3grams", meta_figures.distinct_trigram_scores(texts)),
    ):
        path = folder / f"{name}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"id": r["id"], name: float(v)}) + "\n" for r, v in zip(rows, values, strict=True)
            )
        )
        scores.append(path)
    return ratings, scores


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs (3)")
    parser.add_argument(
        "--resamples", type=int, default=significance.DEFAULT_RESAMPLES,
        help=f"resamples and permutation trials ({significance.DEFAULT_RESAMPLES}, the command's default)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    print(describe_machine())
    with tempfile.TemporaryDirectory() as temporary:
        folder = pathlib.Path(temporary)
        ratings, scores = write_inputs(folder)
        times, reports = [], set()
        for run in range(args.runs):
            report = folder / f"report-{run}.json"
            command = [sys.executable, "-m", "story_quality", "meta-evaluate", str(ratings), *map(str, scores),
                       "--resamples", str(args.resamples), "--json", str(report)]  # fmt: skip
            start = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
            reports.add(report.read_bytes())
            print(f"run {run + 1}: {times[-1]:.1f} s")
    if len(reports) != 1:
        raise SystemExit("the runs' reports differ: the figures are not reproducible")
    print(
        f"median of {args.runs}: {statistics.median(times):.1f} s (500 ratings, 2 metrics, {args.resamples} resamples)"
    )


if __name__ == "__main__":
    main()
