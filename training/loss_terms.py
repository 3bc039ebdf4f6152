"""What a loss term of a UNION run is: one step's view of the batch, and the term's hooks into it.

The training model computes UNION's own loss: the binary human/corrupted cross-entropy, plus
``lambda`` times reconstruction for BERT (:mod:`training.union_model`). A run's options switch on
further terms (:mod:`training.distillation`, :mod:`training.ranking`,
:mod:`training.acceptability`), each a :class:`LossTerm` that adds its share to the step's loss:

    loss = lambda * reconstruction + (1 - r) * ((1 - d) * CE(label) + d * CE(teacher))
           + r * ranking + a * acceptability

(``d``, ``r``, ``a``: ``--distillation_weight``, ``--ranking_weight``, ``--acceptability_weight``).
:class:`training.union_trainer.UnionTrainer` applies the terms in that order; with none, the loss
is the model's own, exactly as the plain ``Trainer`` computes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch.nn import functional as F

if TYPE_CHECKING:
    from transformers import Trainer


@dataclass
class Step:
    """One batch's loss as the terms build it: the model's own loss first, each term adding its share.

    ``columns`` holds what the rows carry beside the model's inputs (teacher, story, severity);
    ``classification`` is the classification loss as the terms so far have shaped it (the label's
    cross-entropy until distillation mixes the teacher's in), which the ranking term takes a share of.
    """

    trainer: Trainer
    model: torch.nn.Module
    inputs: dict[str, Any]
    outputs: Mapping[str, Any]
    columns: dict[str, torch.Tensor]
    loss: torch.Tensor
    _classification: torch.Tensor | None = field(default=None, repr=False)

    def label_loss(self) -> torch.Tensor:
        """The cross-entropy of the logits with the human/corrupted labels (float32)."""
        return F.cross_entropy(self.outputs["logits"].float(), self.inputs["labels"])

    @property
    def classification(self) -> torch.Tensor:
        if self._classification is None:
            self._classification = self.label_loss()
        return self._classification

    @classification.setter
    def classification(self, value: torch.Tensor) -> None:
        self._classification = value


class LossTerm:
    """One term a run's options switch on; a subclass overrides what its term needs.

    ``columns``: the row columns it reads (taken out of the batch before the model's forward).
    """

    name = "term"
    columns: tuple[str, ...] = ()

    def add(self, step: Step) -> None:
        """Add this term's share to ``step.loss`` (and ``step.classification`` where it reshapes it)."""
        raise NotImplementedError

    def batch_sampler(self, trainer: Trainer) -> torch.utils.data.Sampler | None:
        """Batches the term needs the training rows grouped into (None: the Trainer's own)."""
        return None

    def log_entries(self) -> dict[str, float]:
        """What the term adds to a training log line (since the last line)."""
        return {}

    def results(self) -> dict[str, float]:
        """What the term reports at the end of training (``train_<key>`` in the run's results)."""
        return {}
