"""CoLA as a second head on a UNION run's encoder: the encoder learns well-formed sentences beside coherence.

With ``--acceptability_file`` (CoLA's raw TSV) and ``--acceptability_weight w``, each training step
adds ``w * CE`` of a two-class head on the encoder's pooled ``[CLS]`` over one batch of CoLA
sentences (normalised as the run's stories are) to the UNION loss. The head trains with the encoder
and is left out of the exported classifier: the metric's score stays the UNION head's alone.

Batches are a function of the draw's number (a seeded order of the sentences per pass over them),
so a resumed run draws what the uninterrupted one would have, and ranks of a distributed run take
turns through one order instead of repeating each other's sentences.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel, PreTrainedTokenizerBase

if TYPE_CHECKING:
    from transformers import Trainer

from story_quality.training.cola_data import read_cola_tsv
from story_quality.training.loss_terms import LossTerm, Step
from story_quality.training.union_model import BertForUnionTraining

# The attribute the head lives under on the training model (its weights: ``acceptability_head.*``).
ACCEPTABILITY_HEAD = "acceptability_head"


def file_sha256(path: str) -> str:
    """sha256 of a file's bytes (the run record names the CoLA file by it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class AcceptabilityBatches:
    """CoLA sentences, tokenised once, served as padded batches by draw number."""

    def __init__(
        self, input_ids: list[list[int]], labels: list[int], batch_size: int, seed: int, pad_id: int
    ) -> None:
        if not input_ids or len(input_ids) != len(labels):
            raise ValueError(
                f"{len(input_ids)} sentences and {len(labels)} labels: need as many, at least one."
            )
        if batch_size < 1:
            raise ValueError(f"--acceptability_batch_size must be >= 1, got {batch_size}.")
        self.input_ids, self.labels = input_ids, labels
        self.batch_size, self.seed, self.pad_id = batch_size, seed, pad_id
        self._orders: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self.labels)

    def _order(self, epoch: int) -> list[int]:
        if epoch not in self._orders:
            generator = torch.Generator().manual_seed(self.seed * 100_003 + epoch)
            self._orders = {epoch: torch.randperm(len(self), generator=generator).tolist()}
        return self._orders[epoch]

    def indices(self, draw: int) -> list[int]:
        """The sentences of draw ``draw``: each pass over the data visits every sentence once."""
        out = []
        for position in range(draw * self.batch_size, (draw + 1) * self.batch_size):
            epoch, offset = divmod(position, len(self))
            out.append(self._order(epoch)[offset])
        return out

    def batch(self, draw: int) -> dict[str, torch.Tensor]:
        """Draw ``draw`` padded to its longest sentence: input_ids, attention_mask, labels."""
        chosen = self.indices(draw)
        width = max(len(self.input_ids[i]) for i in chosen)
        ids = torch.full((len(chosen), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(chosen), width), dtype=torch.long)
        for row, i in enumerate(chosen):
            ids[row, : len(self.input_ids[i])] = torch.tensor(self.input_ids[i])
            mask[row, : len(self.input_ids[i])] = 1
        return {
            "input_ids": ids,
            "attention_mask": mask,
            "labels": torch.tensor([self.labels[i] for i in chosen]),
        }


def read_acceptability_batches(
    path: str,
    tokenizer: PreTrainedTokenizerBase,
    normalize: Callable[[str], str],
    max_length: int,
    batch_size: int,
    seed: int,
) -> AcceptabilityBatches:
    """CoLA's raw TSV at ``path``, each sentence normalised with ``normalize`` and tokenised."""
    cola = read_cola_tsv(path)
    texts = [normalize(sentence) for sentence in cola["sentence"]]
    empty = [i for i, text in enumerate(texts) if not text.strip()]
    if empty:
        raise ValueError(
            f"{path}: sentence {empty[0] + 1} ({cola['sentence'][empty[0]]!r}) normalises to nothing."
        )
    encoded = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    return AcceptabilityBatches(encoded, list(cola["label"]), batch_size, seed, tokenizer.pad_token_id)


def attach_acceptability_head(model: PreTrainedModel) -> nn.Linear:
    """Give UNION's BERT training model a two-class head beside its classifier, initialised as BERT's are."""
    if not isinstance(model, BertForUnionTraining):
        raise ValueError(
            f"--acceptability_weight trains a head on a BERT encoder's pooled [CLS]; "
            f"{type(model).__name__} is another encoder."
        )
    head = nn.Linear(model.config.hidden_size, 2)
    head.weight.data.normal_(mean=0.0, std=model.config.initializer_range)
    head.bias.data.zero_()
    setattr(model, ACCEPTABILITY_HEAD, head.to(model.device))
    return head


def acceptability_logits(model: BertForUnionTraining, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """The head's two-class logits for a batch of sentences, through the encoder the classifier shares."""
    pooled = model.bert(
        batch["input_ids"], attention_mask=batch["attention_mask"], return_dict=True
    ).pooler_output
    return getattr(model, ACCEPTABILITY_HEAD)(model.dropout(pooled))


class AcceptabilityTerm(LossTerm):
    """``weight`` times the CoLA head's loss on one batch of ``batches`` a training step; evaluation
    never draws."""

    name = "acceptability"

    def __init__(self, weight: float, batches: AcceptabilityBatches) -> None:
        self.weight, self.batches = weight, batches
        self.draws: int | None = None  # micro-batches drawn so far (set from the step on first use)
        self.losses: list[float] = []
        self._logged = 0  # losses already averaged into a log line

    def next_draw(self, trainer: Trainer) -> int:
        """This rank's next draw number: ranks take turns, a resumed run goes on where it stopped."""
        if self.draws is None:
            self.draws = trainer.state.global_step * trainer.args.gradient_accumulation_steps
        draw = self.draws * trainer.args.world_size + trainer.args.process_index
        self.draws += 1
        return draw

    def add(self, step: Step) -> None:
        if not step.model.training:
            return
        trained = step.trainer.accelerator.unwrap_model(step.model)
        device = step.loss.device
        batch = {k: v.to(device) for k, v in self.batches.batch(self.next_draw(step.trainer)).items()}
        head_loss = F.cross_entropy(acceptability_logits(trained, batch).float(), batch["labels"])
        self.losses.append(head_loss.item())
        step.loss = step.loss + self.weight * head_loss

    def log_entries(self) -> dict[str, float]:
        fresh = self.losses[self._logged :]
        if not fresh:
            return {}
        self._logged = len(self.losses)
        return {"acceptability_loss": round(sum(fresh) / len(fresh), 4)}

    def results(self) -> dict[str, float]:
        """The head's mean loss over this process's first and last 50 draws."""
        if not self.losses:
            return {}
        return {
            "acceptability_loss_first_50": float(np.mean(self.losses[:50])),
            "acceptability_loss_last_50": float(np.mean(self.losses[-50:])),
        }
