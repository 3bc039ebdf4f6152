"""Do averaged UNION runs agree with people better than the runs? Weight soup against score ensemble.

Takes the checkpoints of runs of one recipe (``experiments.union_roc_offline`` writes each to
``DIR/checkpoint``), and scores the 400 annotated ROC stories with

- each run,
- the weight average of the runs (``training.average_checkpoints``: one model to run),
- the mean of the runs' probabilities (an ensemble: one model per run to run),

then prints the correlation table beside the published metrics. Scores go to
``--output-dir`` (``member_K.txt``, ``soup.txt``, ``ensemble.txt``; one per line in annotation
order, as ``python -m benchmarks.correlation --metric NAME=FILE`` reads them).

    python -m experiments.union_soup_roc --output-dir outputs/soup outputs/cpuS46/checkpoint outputs/cpuS50/checkpoint
"""

from __future__ import annotations

import argparse
import os
import pathlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import numpy as np  # noqa: E402

from benchmarks.correlation import evaluate_scores, to_markdown  # noqa: E402
from benchmarks.shared_data import add_union_roc_dir  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_annotations, write_scores  # noqa: E402
from story_quality.training.average_checkpoints import average_checkpoints  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+", type=pathlib.Path, help="two or more run checkpoints")
    parser.add_argument("--output-dir", type=pathlib.Path, required=True)
    add_union_roc_dir(parser)
    args = parser.parse_args()
    out = args.output_dir
    annotations = read_annotations(args.data_dir / "ant_data.txt", args.data_dir / "ant_data_all.txt")
    # Averaging first: a bad member list fails before minutes of scoring.
    try:
        soup = average_checkpoints(args.checkpoints, out / "soup")
    except ValueError as error:
        parser.error(str(error))

    scores: dict[str, list[float]] = {}
    for k, checkpoint in enumerate(args.checkpoints):
        scores[f"run {k}: {checkpoint}"] = member = (
            scorer_for(os.path.abspath(checkpoint)).score(list(annotations.stories)).scores
        )
        write_scores(out / f"member_{k}.txt", member)
    ensemble = np.mean([scores[name] for name in scores], axis=0).tolist()
    soup_name = f"weight average of the {len(args.checkpoints)} runs"
    scores[soup_name] = soup_scores = (
        scorer_for(os.path.abspath(soup)).score(list(annotations.stories)).scores
    )
    scores[f"mean probability of the {len(args.checkpoints)} runs"] = ensemble
    write_scores(out / "soup.txt", soup_scores)
    write_scores(out / "ensemble.txt", ensemble)

    report = evaluate_scores(
        annotations, scores, published_dir=args.data_dir / "metric_output", reference=soup_name
    )
    table = to_markdown(report)
    (out / "correlation.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
