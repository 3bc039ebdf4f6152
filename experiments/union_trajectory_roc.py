"""How a UNION run's agreement with people moves during training, and what averaging its tail gives.

``experiments.union_roc_offline --save-steps N`` keeps the Trainer's ``checkpoint-*`` folders of a
run (reconstruction head included). This script exports each as the classifier the ``union``
metric loads (``training.union_model.export_trainer_checkpoint``, ROC normalisation), scores the
400 annotated stories with the metric and prints Pearson / Spearman / Kendall per step: is one
pass over the corrupted corpus too little, or already past the best point? With ``--tail K`` it
also averages the weights of the last K checkpoints (``training.average_checkpoints``: a
within-run soup, in the spirit of stochastic weight averaging) and scores that.

    python -m experiments.union_trajectory_roc outputs/cpuS50lp/checkpoint --tail 2 --output-dir outputs/cpuS50lp/trajectory

Scores go to ``--output-dir`` (``step_N.txt``, ``tail_average.txt``; one per line in annotation
order, as ``python -m benchmarks.correlation --metric NAME=FILE`` reads them).
"""

from __future__ import annotations

import argparse
import os
import pathlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import numpy as np  # noqa: E402

from benchmarks.shared_data import add_union_roc_dir  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_annotations, write_scores  # noqa: E402
from story_quality.evaluation.correlation import correlate  # noqa: E402
from story_quality.training.average_checkpoints import average_checkpoints  # noqa: E402
from story_quality.training.run_setup import trainer_checkpoints  # noqa: E402
from story_quality.training.union_model import export_trainer_checkpoint  # noqa: E402
from story_quality.union.normalization import ROC_STORIES  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=pathlib.Path, help="train_union.py's output folder (DIR/checkpoint)")
    parser.add_argument("--output-dir", type=pathlib.Path, required=True)
    parser.add_argument(
        "--tail", type=int, default=0, metavar="K", help="also average the last K checkpoints"
    )
    add_union_roc_dir(parser)
    args = parser.parse_args()
    checkpoints = trainer_checkpoints(args.run_dir) if args.run_dir.is_dir() else []
    if not checkpoints:
        parser.error(f"{args.run_dir} holds no checkpoint-N folder (train with --save-steps N)")
    if args.tail == 1 or args.tail > len(checkpoints):
        parser.error(f"--tail {args.tail}: need 2..{len(checkpoints)} of the {len(checkpoints)} checkpoints")
    annotations = read_annotations(args.data_dir / "ant_data.txt", args.data_dir / "ant_data_all.txt")
    human = annotations.human_scores
    out = args.output_dir

    rows = []
    exported = []
    for step, checkpoint in checkpoints:
        exported.append(export_trainer_checkpoint(checkpoint, out / f"step-{step}", ROC_STORIES))
        scores = scorer_for(os.path.abspath(exported[-1])).score(list(annotations.stories)).scores
        write_scores(out / f"step_{step}.txt", scores)
        rows.append((f"step {step}", correlate(np.asarray(scores), human)))
    if args.tail:
        average = average_checkpoints(exported[-args.tail :], out / "tail-average")
        scores = scorer_for(os.path.abspath(average)).score(list(annotations.stories)).scores
        write_scores(out / "tail_average.txt", scores)
        steps = ", ".join(str(step) for step, _ in checkpoints[-args.tail :])
        rows.append((f"weight average of steps {steps}", correlate(np.asarray(scores), human)))

    lines = ["| Checkpoint | Pearson | Spearman | Kendall |", "|---|---|---|---|"]
    lines += [f"| {name} | {c.pearson:.4f} | {c.spearman:.4f} | {c.kendall:.4f} |" for name, c in rows]
    table = "\n".join(lines) + "\n"
    (out / "trajectory.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
