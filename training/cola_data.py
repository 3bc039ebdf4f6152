"""CoLA's raw release read as sentences and labels, and its measure (Matthews): GRUEN's CoLA model and
UNION's acceptability head both train on it."""

from __future__ import annotations

from collections.abc import Sequence

import datasets
import numpy as np


def read_cola_tsv(path: str) -> datasets.Dataset:
    r"""CoLA's raw release: tab-separated ``source, label (1 = acceptable), author's mark, sentence``.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("gj04\t1\t\tThe dog barked.\ngj04\t0\t*\tDog the barked.\n")
    >>> read_cola_tsv(f.name).to_dict()
    {'sentence': ['The dog barked.', 'Dog the barked.'], 'label': [1, 0]}
    """
    sentences, labels = [], []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                fields = line.rstrip("\r\n").split("\t")
                if len(fields) != 4 or fields[1] not in ("0", "1"):
                    raise ValueError(
                        f"{path}, line {number}: expected CoLA's 4 tab-separated columns (source, label 0 "
                        f"or 1, mark, sentence), got {line.strip()[:80]!r}."
                    )
                labels.append(int(fields[1]))
                sentences.append(fields[3])
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text ({error}).") from error
    if not sentences:
        raise ValueError(f"{path} holds no sentences.")
    return datasets.Dataset.from_dict(
        {"sentence": sentences, "label": labels},
        features=datasets.Features({"sentence": datasets.Value("string"), "label": datasets.Value("int64")}),
    )


def matthews_correlation(predictions: Sequence[int], labels: Sequence[int]) -> float:
    """Matthews correlation of binary predictions (0 when a confusion-matrix margin is empty).

    >>> matthews_correlation([1, 1, 0, 0], [1, 0, 0, 0])
    0.5773502691896258
    """
    p = np.asarray(predictions) == 1
    y = np.asarray(labels) == 1
    tp, tn = float(np.sum(p & y)), float(np.sum(~p & ~y))
    fp, fn = float(np.sum(p & ~y)), float(np.sum(~p & y))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0
