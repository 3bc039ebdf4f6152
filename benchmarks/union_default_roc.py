"""Agreement with people of a UNION checkpoint, through the metric itself: by default the shipped one.

Scores UNION's 400 annotated ROCStories stories with ``evaluate.load("metrics/union", NAME)``,
writes the scores (one per line, annotation order) and prints the full correlation report of
``benchmarks.correlation`` (Pearson / Spearman / Kendall, Williams tests against the published
metrics, the paper's UNION among them, biased and error-type sets)::

    python -m benchmarks.union_default_roc                                   # the shipped default
    python -m benchmarks.union_default_roc --checkpoint outputs/union-roc-minilm --name "my run"
"""

from __future__ import annotations

import argparse
import os
import pathlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import evaluate  # noqa: E402

from benchmarks.correlation import evaluate_scores, to_markdown  # noqa: E402
from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.shared_data import shared_data  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_annotations  # noqa: E402

METRIC = str(pathlib.Path(__file__).resolve().parents[1] / "metrics" / "union")


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--checkpoint", default="default", help="the metric's config name or a folder (default: default)"
    )
    parser.add_argument(
        "--name", default="UNION shipped default (MiniLM, ours)", help="the row's name in the report"
    )
    parser.add_argument("--scores", type=pathlib.Path, help="also write the scores here")
    parser.add_argument("--report", type=pathlib.Path, help="also write the markdown report here")
    args = parser.parse_args()

    data = shared_data("union-roc")
    annotations = read_annotations(data / "ant_data.txt", data / "ant_data_all.txt")
    checkpoint = (
        args.checkpoint if args.checkpoint == "default" else str(pathlib.Path(args.checkpoint).resolve())
    )
    evaluate.logging.disable_progress_bar()
    scores = evaluate.load(METRIC, checkpoint).compute(predictions=list(annotations.stories))["scores"]
    if args.scores:
        args.scores.write_text("".join(f"{s:.8f}\n" for s in scores))
    report = to_markdown(
        evaluate_scores(annotations, {args.name: scores}, published_dir=data / "metric_output"),
        preamble=[
            f"`python -m benchmarks.union_default_roc --checkpoint {args.checkpoint}`",
            "",
            describe_machine(),
        ],
    )
    if args.report:
        args.report.write_text(report)
    print(report)


if __name__ == "__main__":
    main()
