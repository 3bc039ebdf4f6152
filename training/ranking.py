"""A ranking objective for UNION: a human story above its own copies, and a light copy above a heavy one.

UNION's loss only says "human-written or not". The copies of a story come with a free severity,
and a pairwise loss between rows of one story teaches their order too (after SEScore, Xu et al.
2022, whose severity-graded synthetic errors taught order without human labels). A row's score
is its log-odds of being human-written, ``s = logit[human] - logit[perturbed]``; for every pair
``(i, j)`` of rows of one story in a batch with ``severity[i] < severity[j]``:

- ``bradley_terry``: ``-log sigmoid(s_i - s_j)`` (Bradley and Terry, 1952);
- ``margin``: ``max(0, MARGIN - (s_i - s_j))``;

averaged over the batch's pairs. With ``train_union.py --ranking_weight w`` the classification
loss keeps ``1 - w`` of its weight and the ranking loss takes ``w`` (``w = 1``: instead of it):

    loss = reconstruction term + (1 - w) * classification + w * ranking

Severity (``--severity_source``), read from the ``corruptions`` column every built corpus keeps
(the human row's is empty; :mod:`training.negatives.build`):

- ``perturbations``: the number of edits the copy received (UNION draws 1-4); a written copy
  (LM or n-gram continuation, fluent negative) counts as one;
- ``kind``: fluent negatives (every sentence a person's) 1, LM and n-gram continuations 2,
  edited copies 3;
- ``both``: fluent negatives 1, continuations 2, an edited copy 2 + its number of edits.

The human row is 0 under every source. Rows of one story must share a batch for the loss to see
them: :class:`StoryBatchSampler` packs whole stories into batches.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import datasets
import torch
from torch.nn import functional as F

from story_quality.training.loss_terms import LossTerm, Step
from story_quality.training.negatives.copy_replacement import GENERATED
from story_quality.training.negatives.fluent_candidates import FLUENT
from story_quality.training.negatives.ngram_continuations import GENERATED_NGRAM
from story_quality.training.union_model import SEVERITY_COLUMN, STORY_COLUMN

if TYPE_CHECKING:
    from transformers import Trainer

RANKING_LOSSES = ("none", "margin", "bradley_terry")
SEVERITY_SOURCES = ("perturbations", "kind", "both")
MARGIN = 1.0
# Batches' worth of stories sorted by length together where batches are grouped by length.
LENGTH_CHUNK = 50
# Severity of a written copy by its one corruption label under "kind" and "both".
WRITTEN_SEVERITY = {FLUENT: 1, GENERATED: 2, GENERATED_NGRAM: 2}
EDITED_SEVERITY = 3


def severity(label: int, corruptions: Sequence[str], source: str) -> int:
    """The severity of one row (0 for the human story), under ``source`` (module docstring).

    >>> [severity(0, ["negation", "reordering"], s) for s in SEVERITY_SOURCES]
    [2, 3, 4]
    >>> [severity(0, ["generated:fluent"], s) for s in SEVERITY_SOURCES]
    [1, 1, 1]
    >>> severity(1, [], "both")
    0
    """
    if source not in SEVERITY_SOURCES:
        raise ValueError(f"severity source must be one of {', '.join(SEVERITY_SOURCES)}, got {source!r}")
    if label == 1:
        return 0
    written = len(corruptions) == 1 and corruptions[0] in WRITTEN_SEVERITY
    if source == "perturbations":
        return max(1, len(corruptions))
    if written:
        return WRITTEN_SEVERITY[corruptions[0]]
    return EDITED_SEVERITY if source == "kind" else 2 + max(1, len(corruptions))


def severities(rows: datasets.Dataset, source: str, name: str) -> list[int]:
    """Every row's severity; rows without a ``corruptions`` column are refused by ``name``."""
    if "corruptions" not in rows.column_names:
        raise ValueError(
            f"--severity_source {source} reads each copy's 'corruptions' column, which {name} lacks "
            f"(it has {rows.column_names}); build the rows with training/build_union_data.py."
        )
    columns = rows.select_columns(["label", "corruptions"])
    return [
        severity(label, names, source)
        for label, names in zip(columns["label"], columns["corruptions"], strict=True)
    ]


def ranking_loss(
    scores: torch.Tensor, stories: torch.Tensor, severity: torch.Tensor, kind: str
) -> torch.Tensor:
    """The mean pairwise loss over the rows of one story ordered by severity (0 when no pair is).

    ``scores``: each row's log-odds of being human-written; ``stories``: its story; ``severity``:
    its severity (lower should score higher).
    """
    if kind not in RANKING_LOSSES[1:]:
        raise ValueError(f"ranking loss must be one of {', '.join(RANKING_LOSSES[1:])}, got {kind!r}")
    better = (stories[:, None] == stories[None, :]) & (severity[:, None] < severity[None, :])
    if not bool(better.any()):
        return scores.sum() * 0.0
    gaps = (scores[:, None] - scores[None, :])[better]
    losses = F.softplus(-gaps) if kind == "bradley_terry" else F.relu(MARGIN - gaps)
    return losses.mean()


def log_odds(logits: torch.Tensor) -> torch.Tensor:
    """Each row's log-odds of the human class (label 1) from two-class logits."""
    logits = logits.float()
    return logits[:, 1] - logits[:, 0]


class StoryBatchSampler(torch.utils.data.Sampler[list[int]]):
    """Batches of whole stories: stories in a seeded random order, each story's rows together, a
    batch closed when the next story would not fit in ``batch_size`` rows (so some are smaller).

    With ``lengths`` (each row's length), the shuffled stories are taken :data:`LENGTH_CHUNK`
    batches' worth at a time and sorted by their longest row before packing, and the batches
    then shuffled: batches of like lengths pad less (``train_sampling_strategy`` ``group_by_length``).
    """

    def __init__(
        self, stories: Sequence[int], batch_size: int, seed: int, lengths: Sequence[int] | None = None
    ) -> None:
        rows: dict[int, list[int]] = {}
        for row, story in enumerate(stories):
            rows.setdefault(story, []).append(row)
        largest = max((len(r) for r in rows.values()), default=0)
        if largest > batch_size:
            raise ValueError(
                f"a story has {largest} rows, more than the batch size {batch_size}: rows of one story "
                "must share a batch for the ranking loss; raise --per_device_train_batch_size."
            )
        self.groups = [rows[story] for story in sorted(rows)]
        self.longest = None if lengths is None else [max(lengths[row] for row in g) for g in self.groups]
        self.batch_size, self.seed, self.epoch = batch_size, seed, 0
        self._batches = self._pack()

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self._batches = self._pack()

    def _pack(self) -> list[list[int]]:
        draw = random.Random(f"{self.seed}:{self.epoch}")
        order = list(range(len(self.groups)))
        draw.shuffle(order)
        if self.longest is not None:
            rows_per_group = max(1, round(sum(map(len, self.groups)) / max(1, len(self.groups))))
            chunk = max(1, LENGTH_CHUNK * self.batch_size // rows_per_group)
            order = [
                group
                for start in range(0, len(order), chunk)
                for group in sorted(order[start : start + chunk], key=lambda g: -self.longest[g])
            ]
        batches: list[list[int]] = []
        current: list[int] = []
        for group in order:
            if current and len(current) + len(self.groups[group]) > self.batch_size:
                batches.append(current)
                current = []
            current = current + self.groups[group]
        batches += [current] if current else []
        if self.longest is not None:
            draw.shuffle(batches)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches)

    def __len__(self) -> int:
        return len(self._batches)


class RankingTerm(LossTerm):
    """``weight`` of the classification loss given to a ``kind`` ranking loss between rows of one story
    (``story_index`` and ``severity`` columns); training batches hold whole stories."""

    name = "ranking"
    columns = (STORY_COLUMN, SEVERITY_COLUMN)

    def __init__(self, kind: str, weight: float) -> None:
        if kind not in RANKING_LOSSES[1:]:
            raise ValueError(f"ranking loss must be one of {', '.join(RANKING_LOSSES[1:])}, got {kind!r}")
        self.kind, self.weight = kind, weight

    def batch_sampler(self, trainer: Trainer) -> StoryBatchSampler:
        dataset, args = trainer.train_dataset, trainer.args
        lengths = (
            [len(ids) for ids in dataset["input_ids"]]
            if args.train_sampling_strategy == "group_by_length"
            else None
        )
        return StoryBatchSampler(dataset[STORY_COLUMN], trainer._train_batch_size, args.seed, lengths)

    def add(self, step: Step) -> None:
        stories, severity = step.columns.get(STORY_COLUMN), step.columns.get(SEVERITY_COLUMN)
        if stories is None or severity is None:
            return
        ranking = ranking_loss(log_odds(step.outputs["logits"]), stories, severity, self.kind)
        step.loss = step.loss + self.weight * (ranking - step.classification)
