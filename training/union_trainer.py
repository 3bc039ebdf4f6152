"""The one Trainer of a UNION run: the model's own loss plus the loss terms the run's options switch on.

Which terms there are and how they compose: :mod:`training.loss_terms`; :func:`run_loss_terms`
builds those a run's options switch on. A run with no term on (the shipped recipe) trains exactly
as the plain ``transformers.Trainer`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils.data import DataLoader
from transformers import PreTrainedTokenizerBase, Trainer

from story_quality.training.acceptability import AcceptabilityTerm, read_acceptability_batches
from story_quality.training.distillation import DistillationTerm
from story_quality.training.loss_terms import LossTerm, Step
from story_quality.training.ranking import RankingTerm
from story_quality.training.union_arguments import Run
from story_quality.training.union_model import ROW_COLUMNS


class UnionTrainer(Trainer):
    """The Trainer with ``terms`` added to the model's loss, in their order.

    The row columns (teacher, story, severity) never reach the model's forward; a term that needs
    its rows grouped (the ranking term: whole stories) gives the training batches.
    """

    def __init__(self, *args: Any, terms: Sequence[LossTerm] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.terms = list(terms)

    def get_train_dataloader(self) -> DataLoader:
        samplers = [s for s in (term.batch_sampler(self) for term in self.terms) if s is not None]
        if not samplers:
            return super().get_train_dataloader()
        loader = DataLoader(
            self.train_dataset,
            batch_sampler=samplers[0],
            collate_fn=self.data_collator,
            num_workers=self.args.dataloader_num_workers,
            pin_memory=self.args.dataloader_pin_memory,
        )
        return self.accelerator.prepare(loader)

    def compute_loss(
        self,
        model: torch.nn.Module,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: Any = None,
    ) -> Any:
        columns = {name: inputs.pop(name) for name in ROW_COLUMNS if name in inputs}
        loss, outputs = super().compute_loss(
            model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch
        )
        if self.terms:
            step = Step(self, model, inputs, outputs, columns, loss)
            for term in self.terms:
                term.add(step)
            loss = step.loss
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Training log lines also carry what each term logs (its mean loss since the last line)."""
        if "loss" in logs:
            for term in self.terms:
                logs = {**logs, **term.log_entries()}
        super().log(logs, start_time)


def run_loss_terms(run: Run, tokenizer: PreTrainedTokenizerBase) -> list[LossTerm]:
    """The terms ``run``'s options switch on, in the order they compose (none for a plain run).

    The acceptability term reads ``--acceptability_file``'s CoLA sentences, normalised as the
    run's stories and tokenised with ``tokenizer``.
    """
    options = run.model_args
    terms: list[LossTerm] = []
    if options.distillation_weight:
        terms.append(DistillationTerm(options.distillation_weight))
    if options.ranking_weight and options.ranking_loss != "none":
        terms.append(RankingTerm(options.ranking_loss, options.ranking_weight))
    if options.acceptability_weight and options.acceptability_file:
        batches = read_acceptability_batches(
            options.acceptability_file,
            tokenizer,
            run.preset.normalization,
            options.max_length,
            options.acceptability_batch_size,
            run.args.seed,
        )
        terms.append(AcceptabilityTerm(options.acceptability_weight, batches))
    return terms
