"""Add the mean score of UNION checkpoints (the teachers) to every row of a training set.

A student trained with ``train_union.py --distillation_weight W`` learns part of its
classification loss from these probabilities instead of the human/corrupted label, so one
checkpoint can be taught what several agree on (knowledge distillation, Hinton et al., 2015):

    python training/teacher_scores.py --dataset outputs/union-pairs --teacher RUN_A --teacher RUN_B \\
        --output_dir outputs/union-pairs-taught --max_length 256

Each row's ``text`` is read exactly as training reads it: no normalisation (the rows already
carry the one they were built with, which every teacher must record too), tokenised by the
teacher's tokenizer, its head kept at ``--max_length`` word pieces. The result is the dataset with
one more column, ``teacher``: the mean over the teachers of P(human-written). Use rows the
teachers were not trained on (another ``--seed`` of ``build_union_data.py``): on their own
training rows teachers are near-certain and teach little beyond the labels.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Sequence

import datasets
import numpy as np

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.devices import check_device
from story_quality.training.distillation import (
    TEACHER_COLUMN,
    add_teacher_scores,
    check_scoring_options,
    teacher_sha256,
)
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.negatives.lm_continuations import load_corpus
from story_quality.training.output_folders import (
    check_output_folder,
    probe_writable,
    saved_dataset,
    written_whole,
)

SUMMARY = "teacher_scores_summary.json"
# The output: a saved dataset and its summary, never another tool's folder.
TAUGHT = saved_dataset("teacher_scores", "rows with teacher scores", SUMMARY)


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--dataset", type=pathlib.Path, required=True, help="training rows (a folder of build_union_data.py)"
    )
    parser.add_argument(
        "--teacher", action="append", required=True, help="a UNION checkpoint folder (repeat for several)"
    )
    parser.add_argument(
        "--output_dir", type=pathlib.Path, required=True, help="where the rows with their teacher column go"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier output of this tool")
    parser.add_argument(
        "--max_length",
        type=int,
        default=256,
        help="word pieces read per row, as the student's run (default: 256)",
    )
    parser.add_argument("--batch_size", type=int, default=64, help="scoring batch size (default: 64)")
    parser.add_argument(
        "--device", default="cpu", help="torch device to score on: cpu, cuda, cuda:1, mps (default: cpu)"
    )
    args = parser.parse_args(argv)
    try:
        # the options first, before the output folder or the rows are looked at
        check_scoring_options(args.max_length, args.batch_size, ("--max_length", "--batch_size"))
        check_device(args.device)
        summary = teach(args)
    except (OSError, ValueError) as error:  # the user's to fix: a usage error naming the folder or option
        parser.error(str(error))
    print(json.dumps(summary, indent=1))


def teach(args: argparse.Namespace) -> dict[str, object]:
    """Check the output folder, read the rows, score them with the teachers, write rows and summary."""
    check_output_folder(
        args.output_dir, TAUGHT, args.overwrite, inputs=[args.dataset, *args.teacher], option="--output_dir"
    )
    probe_writable(args.output_dir, "--output_dir")
    pairs = load_corpus(args.dataset, "--dataset")
    taught = add_teacher_scores(
        pairs, args.teacher, args.max_length, args.batch_size, args.device, str(args.dataset)
    )
    return save_taught(pairs, taught, args.teacher, args.max_length, args.output_dir)


def save_taught(
    pairs: datasets.Dataset, taught: datasets.Dataset, teachers: list[str], max_length: int, output_dir: str
) -> dict[str, object]:
    """Write the rows with their ``teacher`` column and the summary beside them (both or neither);
    return the summary: the teachers, the rows' and the scores' sha256."""
    summary = {
        "teachers": teachers,
        "max_length": max_length,
        "rows": len(taught),
        "mean_teacher_score": float(np.mean(taught[TEACHER_COLUMN])),
        "corpus_sha256": corpus_sha256(pairs),
        "teacher_sha256": teacher_sha256(taught),
    }
    with written_whole(output_dir) as scratch:
        taught.save_to_disk(str(scratch))
        (scratch / SUMMARY).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


if __name__ == "__main__":
    main()
