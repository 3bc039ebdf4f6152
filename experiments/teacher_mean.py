"""The student's rows with the teachers' mean score, from each teacher's scores saved apart.

Each ``teacher-NAME.npy`` holds one teacher's ``teacher`` column from ``training/teacher_scores.py``
(one teacher a run), beside its ``teacher-NAME-summary.json``; their mean is what one run with
``--teacher A --teacher B`` writes. The rows must be the ones scored (same corpus sha256).

    python -m experiments.teacher_mean ROWS OUT NAME=RESULTS_DIR [NAME=RESULTS_DIR ...]
"""

from __future__ import annotations

import json
import pathlib
import sys

import datasets
import numpy as np

from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.teacher_scores import save_taught
from story_quality.training.union_model import TEACHER_COLUMN


def main() -> None:
    rows_dir, out_dir, *teachers = sys.argv[1:]
    pairs = datasets.load_from_disk(rows_dir)
    rows_hash = corpus_sha256(pairs)
    scores, names, lengths = [], [], set()
    for given in teachers:
        name, where = given.split("=", 1)
        summary = json.loads(pathlib.Path(where, f"teacher-{name}-summary.json").read_text())
        if summary["corpus_sha256"] != rows_hash:
            raise SystemExit(f"{name} scored other rows ({summary['corpus_sha256']}, these are {rows_hash}).")
        column = np.load(pathlib.Path(where, f"teacher-{name}.npy"))
        if column.shape != (len(pairs),):
            raise SystemExit(f"{name}: {column.shape[0]} scores for {len(pairs)} rows.")
        scores.append(column)
        names.extend(summary["teachers"])
        lengths.add(summary["max_length"])
    if len(lengths) != 1:
        raise SystemExit(f"the teachers read the rows at different lengths: {sorted(lengths)}.")
    taught = pairs.add_column(TEACHER_COLUMN, [float(x) for x in np.mean(scores, axis=0)])
    print(json.dumps(save_taught(pairs, taught, names, lengths.pop(), out_dir), indent=1))


if __name__ == "__main__":
    main()
