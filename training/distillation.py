"""Knowledge distillation for UNION: several checkpoints' mean score taught to one.

Runs of one recipe that differ only in their seed agree with people to different degrees, and the
mean of their scores agrees better than either (``benchmarks/RESULTS.md``); scoring a mean costs
one model per member. A student trained on rows that carry the teachers' mean probability
(``teacher_scores.py`` adds it) learns part of its classification loss from that probability
instead of the human/corrupted label (Hinton, Vinyals and Dean, 2015):

    loss = reconstruction term + (1 - w) * CE(logits, label) + w * CE(logits, [1 - teacher, teacher])

with ``w`` = ``train_union.py --distillation_weight``; label 1 (human-written) is the teacher's
probability's class. ``w = 0`` is UNION's own objective.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import datasets
import numpy as np
import torch
from torch.nn import functional as F

from story_quality.batching import progress
from story_quality.checkpoints.reference import repeated_checkpoint
from story_quality.model_window import model_window
from story_quality.training.loss_terms import LossTerm, Step
from story_quality.training.negatives.build import normalization_of
from story_quality.training.union_model import TEACHER_COLUMN
from story_quality.union import UnionScorer
from story_quality.union.encoding import MIN_WINDOW, encode
from story_quality.union.inference import class_probabilities
from story_quality.union.normalization import StoryNormalization


def teacher_probabilities(
    scorer: UnionScorer, texts: Sequence[str], max_length: int, batch_size: int, device: torch.device
) -> np.ndarray:
    """P(human-written) of each text as training reads it: no normalisation, head kept at ``max_length``;
    the scorer's model is moved to ``device`` first (it loads on the CPU)."""
    scorer.model.to(device)
    with progress(total=len(texts), desc="Teacher text", unit="row") as bar:
        encoded = encode(scorer.tokenizer, list(texts), max_length, progress=bar.update)
    scores = class_probabilities(
        scorer.logits_fn,
        encoded,
        label_index=scorer.label_index,
        pad_id=scorer.tokenizer.pad_token_id,
        batch_size=batch_size,
        device=device,
        progress=lambda batches: progress(batches, desc="Teacher", unit="batch"),
    )
    return np.asarray(scores, dtype=float)


def check_scoring_options(
    max_length: int, batch_size: int, names: tuple[str, str] = ("max_length", "batch_size")
) -> None:
    """Fail unless the teachers can read ``max_length`` word pieces a row, ``batch_size`` rows at a
    time; ``names`` are what the caller calls the two (a command's options)."""
    if max_length < MIN_WINDOW:
        raise ValueError(f"{names[0]} must be at least {MIN_WINDOW}, got {max_length}.")
    if batch_size < 1:
        raise ValueError(f"{names[1]} must be at least 1, got {batch_size}.")


def add_teacher_scores(
    pairs: datasets.Dataset,
    teachers: Sequence[str],
    max_length: int,
    batch_size: int = 64,
    device: str = "cpu",
    source: str = "the dataset",
) -> datasets.Dataset:
    """``pairs`` with a ``teacher`` column: the mean of the teachers' probabilities, row by row.

    Each distinct text is scored once per teacher. A teacher recording another normalisation
    than the rows were built with is refused by name before any text is scored.
    """
    check_rows_and_teachers(pairs, teachers, source)
    check_scoring_options(max_length, batch_size)
    built_with = recorded_normalization(pairs)
    scorers = [row_scorer(teacher, built_with, max_length, source) for teacher in teachers]
    texts = pairs["text"]
    distinct = list(dict.fromkeys(texts))
    where = {text: i for i, text in enumerate(distinct)}
    mean = np.mean(
        [teacher_probabilities(s, distinct, max_length, batch_size, torch.device(device)) for s in scorers],
        axis=0,
    )
    return pairs.add_column(TEACHER_COLUMN, [float(mean[where[text]]) for text in texts])


def row_scorer(
    checkpoint: str,
    built_with: StoryNormalization | None,
    max_length: int,
    source: str,
    role: str = "Teacher",
) -> UnionScorer:
    """A scorer of ``checkpoint`` that reads rows built with ``built_with`` as they are, ``max_length``
    word pieces each; a checkpoint recording another normalisation, or reading fewer pieces, is
    refused by name (``role``: what the caller calls it)."""
    scorer = UnionScorer(checkpoint)
    if built_with is not None and built_with != scorer.normalization:
        raise ValueError(
            f"{role} {checkpoint} records normalisation {scorer.normalization.to_dict()}, but the rows of "
            f"{source} were built with {built_with.to_dict()}; it reads the rows as they are, so "
            "it must record theirs."
        )
    window = model_window(scorer.tokenizer, scorer.model.config)
    if max_length > window:
        raise ValueError(
            f"{role} {checkpoint} reads at most {window} word pieces; max_length is {max_length}."
        )
    return scorer


def check_rows_and_teachers(pairs: datasets.Dataset, teachers: Sequence[str], source: str) -> None:
    """Fail, before any teacher is loaded, on rows with nothing to score or teachers named wrongly."""
    if not teachers:
        raise ValueError("Name at least one teacher checkpoint.")
    repeated = repeated_checkpoint(list(teachers))
    if repeated:
        first, again, why = repeated
        raise ValueError(
            f"--teacher {again} is --teacher {first} again ({why}); name each model once (the mean would "
            "count it twice)."
        )
    if "text" not in pairs.column_names:
        raise ValueError(
            f"{source} has no 'text' column (it has {pairs.column_names}); teachers score the rows of "
            "training/build_union_data.py."
        )
    if len(pairs) == 0:
        raise ValueError(f"{source} holds no rows.")
    if TEACHER_COLUMN in pairs.column_names:
        raise ValueError(f"{source} already has a {TEACHER_COLUMN!r} column; start from rows without one.")


def recorded_normalization(pairs: datasets.Dataset) -> StoryNormalization | None:
    """The normalisation the rows were built with, as their build recorded it (None: rows from elsewhere)."""
    try:
        return normalization_of(pairs)
    except ValueError:
        return None


def teacher_sha256(rows: datasets.Dataset) -> str:
    """sha256 of the rows' ``teacher`` column, every value in order (as float64), for summaries and resumes."""
    scores = rows.select_columns([TEACHER_COLUMN])
    digest = hashlib.sha256()
    for start in range(0, len(scores), 10_000):
        digest.update(np.asarray(scores[start : start + 10_000][TEACHER_COLUMN], dtype="<f8").tobytes())
    return digest.hexdigest()


def check_teacher_scores(rows: datasets.Dataset, source: str | None) -> None:
    """Fail unless every row's ``teacher`` score is a probability, naming the first row that is not."""
    try:
        scores = np.asarray(rows[TEACHER_COLUMN], dtype=float)
    except (TypeError, ValueError):
        scores = None
    if scores is None or scores.ndim != 1:
        raise ValueError(f"{source}: the {TEACHER_COLUMN!r} column holds no number per row.")
    outside = np.flatnonzero(~((scores >= 0) & (scores <= 1)))  # NaN (a missing score) is outside too
    if outside.size:
        first = int(outside[0])
        value = "missing" if np.isnan(scores[first]) else scores[first]
        raise ValueError(
            f"{source}: {outside.size} rows' {TEACHER_COLUMN!r} score is no probability between 0 and 1, "
            f"first {value} for the text {rows[first]['text'][:60]!r}."
        )


def soft_cross_entropy(logits: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of two-class logits against P(class 1) = ``teacher``, row by row."""
    log_probs = F.log_softmax(logits.float(), dim=-1)
    teacher = teacher.to(log_probs.dtype)
    return -(teacher * log_probs[:, 1] + (1 - teacher) * log_probs[:, 0]).mean()


class DistillationTerm(LossTerm):
    """``weight`` of the classification loss taught by the rows' ``teacher`` column instead of the label.

    Batches without a ``teacher`` train on the model's own loss unchanged.
    """

    name = "distillation"
    columns = (TEACHER_COLUMN,)

    def __init__(self, weight: float) -> None:
        self.weight = weight

    def add(self, step: Step) -> None:
        teacher = step.columns.get(TEACHER_COLUMN)
        if teacher is None:
            return
        hard = step.label_loss()
        soft = soft_cross_entropy(step.outputs["logits"], teacher)
        step.loss = step.loss + self.weight * (soft - hard)
        step.classification = hard + self.weight * (soft - hard)
