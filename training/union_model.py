"""UNION's training model: BERT with a two-class head on the pooled ``[CLS]`` plus a reconstruction head.

The reconstruction head is BERT's own masked-LM head (decoder tied to the word embeddings)
applied to the last-layer states of the (possibly corrupted) input; at every position it
predicts the token the *original* human story has there. Positions on ``[CLS]``, on the
leading context (never corrupted, so trivially copied) and on padding carry no loss. The
training loss is ``cls_loss + reconstruction_weight * reconstruction_loss`` (UNION: 0.1).

Only the classifier is published: :func:`export_classifier` turns a trained model into the
plain ``BertForSequenceClassification`` the ``union`` metric loads, without the head.

Other encoders (MPNet, RoBERTa, ...) have no BERT masked-LM head to reconstruct with; with the
reconstruction term off they train as their own ``AutoModelForSequenceClassification``
(:func:`load_union_model`), which is already the classifier the metric loads.
"""

from __future__ import annotations

import copy
import os
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BertForSequenceClassification,
    BertModel,
    BertPreTrainedModel,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.models.bert.modeling_bert import BertOnlyMLMHead
from transformers.utils import ModelOutput

from story_quality.model_window import usable_positions
from story_quality.union.checkpoints import CheckpointError
from story_quality.union.loading import human_label_index
from story_quality.union.normalization import CONFIG_KEY, PLACEHOLDERS, StoryNormalization

IGNORE_INDEX = -100
ID2LABEL = {0: "perturbed", 1: "human"}
LABEL2ID = {label: i for i, label in ID2LABEL.items()}
DEFAULT_RECONSTRUCTION_WEIGHT = 0.1
# The architectures of a saved classifier (its head is in the checkpoint), by their names' ends.
CLASSIFIER_ARCHITECTURES = ("ForSequenceClassification", "ForUnionTraining")


@dataclass
class UnionTrainingOutput(ModelOutput):
    """The joint loss, the class logits, and the two loss terms (for logging)."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    classification_loss: torch.Tensor | None = None
    reconstruction_loss: torch.Tensor | None = None


class BertForUnionTraining(BertPreTrainedModel):
    """BERT + sequence classifier + tied masked-LM head, trained with UNION's joint objective.

    Parameter names match ``BertForSequenceClassification`` (``bert``, ``classifier``) and
    ``BertForPreTraining`` (``cls.predictions``), so ``from_pretrained("bert-base-uncased")``
    loads the pretrained masked-LM head as the reconstruction head's start.
    """

    _tied_weights_keys = {
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias",
    }
    # Trainer's evaluation gathers every output but these; the loss terms are scalars.
    _keys_to_ignore_in_eval = ("classification_loss", "reconstruction_loss")

    def __init__(self, config: Any, reconstruction_weight: float = DEFAULT_RECONSTRUCTION_WEIGHT) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.reconstruction_weight = float(reconstruction_weight)
        self.bert = BertModel(config)
        dropout = (
            config.classifier_dropout if config.classifier_dropout is not None else config.hidden_dropout_prob
        )
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.cls = BertOnlyMLMHead(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Module:
        return self.cls.predictions.decoder

    def set_output_embeddings(self, new_embeddings: nn.Module) -> None:
        self.cls.predictions.decoder = new_embeddings
        self.cls.predictions.bias = new_embeddings.bias

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        reconstruction_labels: torch.Tensor | None = None,
    ) -> UnionTrainingOutput:
        outputs = self.bert(
            input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, return_dict=True
        )
        logits = self.classifier(self.dropout(outputs.pooler_output))
        if labels is None:
            return UnionTrainingOutput(logits=logits)
        classification_loss = F.cross_entropy(logits.float(), labels)
        reconstruction_loss = None
        loss = classification_loss
        if self.reconstruction_weight and reconstruction_labels is not None:
            reconstruction_loss = self.reconstruction_loss(outputs.last_hidden_state, reconstruction_labels)
            loss = classification_loss + self.reconstruction_weight * reconstruction_loss
        return UnionTrainingOutput(
            loss=loss,
            logits=logits,
            classification_loss=classification_loss.detach(),
            reconstruction_loss=None if reconstruction_loss is None else reconstruction_loss.detach(),
        )

    def reconstruction_loss(self, hidden_states: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over the batch's weighted positions (0 when there are none).

        The vocabulary projection is applied only at those positions: it is the costliest
        matrix product of the step, and most positions of a batch are context or padding.
        """
        weighted = targets != IGNORE_INDEX
        if not bool(weighted.any()):
            return hidden_states.sum() * 0.0
        transformed = self.cls.predictions.transform(hidden_states[weighted])
        decoder = self.cls.predictions.decoder
        return VocabularyCrossEntropy.apply(transformed, decoder.weight, decoder.bias, targets[weighted])


class VocabularyCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of ``hidden @ weight.T + bias`` over the vocabulary, with one logits buffer.

    ``F.cross_entropy(decoder(hidden))`` allocates four (positions x vocabulary) tensors per step
    (logits, log-softmax, the zero-filled gradient of the loss and that of the log-softmax): 55 MB
    each for ten ROC stories and a 30k vocabulary, each paged in afresh and streamed through
    memory. Here the backward turns the saved logits into their own gradient in place, a
    cache-sized block of rows at a time, which takes less time (benchmarks/bench_train_union.py). Same loss and
    gradients (to rounding); logits in the autocast dtype when autocast is on, normaliser and
    softmax in float32.
    """

    @staticmethod
    def forward(
        ctx: Any, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor
    ) -> torch.Tensor:
        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else weight.dtype
        with torch.autocast(device, enabled=False):
            inputs, matrix = hidden.to(dtype), weight.to(dtype)
            logits = inputs @ matrix.t() if bias is None else torch.addmm(bias.to(dtype), inputs, matrix.t())
            normaliser = torch.empty(len(logits), device=hidden.device, dtype=torch.float32)
            for rows in _row_blocks(logits):
                normaliser[rows] = torch.logsumexp(logits[rows].float(), dim=-1)
            picked = logits.gather(1, targets[:, None]).squeeze(1).float()
        ctx.save_for_backward(inputs, matrix, logits, normaliser, targets)
        ctx.input_dtypes = (hidden.dtype, weight.dtype, None if bias is None else bias.dtype)
        return (normaliser - picked).mean()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        inputs, matrix, logits, normaliser, targets = ctx.saved_tensors
        scale = grad.float() / len(logits)
        for rows in _row_blocks(logits):  # softmax - one-hot, scaled: the logits' gradient, in place
            block = logits[rows].float().sub_(normaliser[rows, None]).exp_().mul_(scale)
            block.scatter_add_(1, targets[rows, None], (-scale).expand(len(block), 1))
            if block.data_ptr() != logits[rows].data_ptr():
                logits[rows] = block
        hidden_dtype, weight_dtype, bias_dtype = ctx.input_dtypes
        grad_hidden = (logits @ matrix).to(hidden_dtype)
        grad_weight = (logits.t() @ inputs).to(weight_dtype)
        grad_bias = None if bias_dtype is None else logits.sum(0, dtype=torch.float32).to(bias_dtype)
        return grad_hidden, grad_weight, grad_bias, None


def _row_blocks(logits: torch.Tensor) -> list[slice]:
    """Blocks of rows of about 1 MB on a CPU (they stay in cache between passes); one block on a GPU."""
    rows = len(logits) if logits.is_cuda else max(1, (1 << 20) // (logits.shape[1] * logits.element_size()))
    return [slice(start, start + rows) for start in range(0, len(logits), rows)]


def reconstruction_labels(original_ids: Sequence[int], input_length: int, context_length: int) -> list[int]:
    """Per-position targets of one example: the original story's token, ``-100`` where unweighted.

    Aligned with the input by position and cut or padded to its length; the first
    ``1 + context_length`` positions (``[CLS]`` and the leading context) carry no loss.

    >>> reconstruction_labels([101, 7, 8, 9, 10, 102], input_length=5, context_length=1)
    [-100, -100, 8, 9, 10]
    >>> reconstruction_labels([101, 7, 8, 102], input_length=6, context_length=0)
    [-100, 7, 8, 102, -100, -100]
    """
    targets = list(original_ids[:input_length]) + [IGNORE_INDEX] * (input_length - len(original_ids))
    unweighted = min(input_length, 1 + context_length)
    targets[:unweighted] = [IGNORE_INDEX] * unweighted
    return targets


# The column of the teachers' mean P(human-written) a distilled run learns from (training/distillation.py).
TEACHER_COLUMN = "teacher"
# The story and severity of each row a ranking run learns the order of (training/ranking.py).
STORY_COLUMN = "story_index"
SEVERITY_COLUMN = "severity"
# The columns rows carry beside the model's inputs, for the loss terms (training/loss_terms.py).
ROW_COLUMNS = (TEACHER_COLUMN, STORY_COLUMN, SEVERITY_COLUMN)


def encode_union_examples(
    batch: Mapping[str, list[Any]], tokenizer: PreTrainedTokenizerBase, max_length: int
) -> dict[str, list[Any]]:
    """Tokenise a batch of negative-sampled examples (``text``, ``label``, ``original``, ``context``).

    ``[CLS] story [SEP]`` as one segment, head kept; for ``datasets.map(batched=True)``.
    """
    encoded = tokenizer(batch["text"], truncation=True, max_length=max_length)
    originals = tokenizer(batch["original"], truncation=True, max_length=max_length)["input_ids"]
    contexts = tokenizer(batch["context"], add_special_tokens=False)["input_ids"]
    encoded["reconstruction_labels"] = [
        reconstruction_labels(original, len(ids), len(context))
        for ids, original, context in zip(encoded["input_ids"], originals, contexts, strict=True)
    ]
    encoded["labels"] = list(batch["label"])
    if TEACHER_COLUMN in batch:  # the teachers' mean probability, for distillation
        encoded[TEACHER_COLUMN] = list(batch[TEACHER_COLUMN])
    return dict(encoded)


class UnionDataCollator:
    """Pads a batch dynamically: the tokenizer pads the inputs, ``-100`` pads the reconstruction targets."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, pad_to_multiple_of: int | None = None) -> None:
        self.tokenizer = tokenizer
        self.pad_to_multiple_of = pad_to_multiple_of

    def __call__(self, features: list[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        targets = [list(f["reconstruction_labels"]) for f in features if "reconstruction_labels" in f]
        teacher = [float(f[TEACHER_COLUMN]) for f in features if TEACHER_COLUMN in f]
        ranking = {c: [int(f[c]) for f in features if c in f] for c in (STORY_COLUMN, SEVERITY_COLUMN)}
        carried = ("reconstruction_labels", *ROW_COLUMNS)
        inputs = [{k: v for k, v in f.items() if k not in carried} for f in features]
        batch = self.tokenizer.pad(inputs, pad_to_multiple_of=self.pad_to_multiple_of, return_tensors="pt")
        if teacher:
            batch[TEACHER_COLUMN] = torch.tensor(teacher, dtype=torch.float32)
        for column, values in ranking.items():
            if values:
                batch[column] = torch.tensor(values, dtype=torch.long)
        if targets:
            width = batch["input_ids"].shape[1]
            batch["reconstruction_labels"] = torch.tensor(
                [t + [IGNORE_INDEX] * (width - len(t)) for t in targets], dtype=torch.long
            )
        return dict(batch)


def add_placeholder_tokens(tokenizer: PreTrainedTokenizerBase) -> list[str]:
    """Make ``[MALE]``/``[FEMALE]``/``[NEUTRAL]`` single tokens; returns the ones that had to be added."""
    missing = [
        tag for tag in PLACEHOLDERS if len(tokenizer.tokenize(tag)) != 1 or tokenizer.tokenize(tag)[0] != tag
    ]
    if missing:
        tokenizer.add_special_tokens({"extra_special_tokens": missing}, replace_extra_special_tokens=False)
    return missing


def check_encoder(name_or_path: str, reconstruction_weight: float, max_length: int) -> str:
    """The encoder's ``model_type``; refuses a window beyond its positions, and reconstruction for an
    encoder without BERT's masked-LM head."""
    config = AutoConfig.from_pretrained(name_or_path)
    positions = usable_positions(config)
    if positions and max_length > positions:
        raise ValueError(
            f"--max_length {max_length} exceeds the {positions} positions of {name_or_path}; "
            f"pass at most {positions}."
        )
    if config.model_type != "bert" and reconstruction_weight:
        raise ValueError(
            f"--reconstruction_weight {reconstruction_weight} needs a BERT encoder (its masked-LM head "
            f"rebuilds the story); {name_or_path} is a {config.model_type!r} model: pass --reconstruction_weight 0."
        )
    reversed_union_head(config, name_or_path)
    return config.model_type


def reversed_union_head(config: Any, name_or_path: str) -> bool:
    """Whether the start checkpoint is a UNION classifier with its classes the other way round
    (``{0: human, 1: perturbed}``, which ``score`` reads by :func:`human_label_index`, the one rule):
    its head rows are then swapped into UNION's order. A base encoder (no classifier saved) gets a
    new head; a classifier of another task (CoLA's acceptable/unacceptable, unnamed labels) is
    refused: trained on under UNION's class names, its head would make a model ``score`` refuses."""
    if not any(name.endswith(CLASSIFIER_ARCHITECTURES) for name in config.architectures or []):
        return False
    try:
        return human_label_index(config, name_or_path) == 0
    except CheckpointError:
        labels = {
            int(i): label for i, label in sorted(config.id2label.items(), key=lambda item: int(item[0]))
        }
        raise ValueError(
            f"--model_name_or_path {name_or_path} is a two-class classifier labelled {labels}, not a UNION "
            f"checkpoint ({ID2LABEL}): start from a base encoder or a UNION checkpoint."
        ) from None


def _swap_head_rows(model: PreTrainedModel, name_or_path: str) -> None:
    """Swap the two output rows of ``model``'s classification head (the one linear layer with two outputs)."""
    heads = [
        module for module in model.modules() if isinstance(module, nn.Linear) and module.out_features == 2
    ]
    if len(heads) != 1:
        raise ValueError(
            f"--model_name_or_path {name_or_path} is labelled {{0: human, 1: perturbed}} and its head cannot be "
            f"told apart ({len(heads)} two-output layers) to put it in UNION's order {ID2LABEL}: relabel it."
        )
    with torch.no_grad():
        heads[0].weight.copy_(heads[0].weight.flip(0))
        if heads[0].bias is not None:
            heads[0].bias.copy_(heads[0].bias.flip(0))


def training_class(model_type: str) -> type[BertForUnionTraining] | type[AutoModelForSequenceClassification]:
    """The class a UNION run of a ``model_type`` encoder trains, and its checkpoints load as."""
    return BertForUnionTraining if model_type == "bert" else AutoModelForSequenceClassification


def load_union_model(name_or_path: str, reconstruction_weight: float, model_type: str) -> PreTrainedModel:
    """UNION's training model: BERT's joint model, or another encoder's plain two-class classifier.

    ``model_type`` is :func:`check_encoder`'s answer for ``name_or_path``. A UNION checkpoint labelled
    the other way round has its head put in UNION's order; another task's classifier is refused
    (:func:`reversed_union_head`).
    """
    reversed_head = reversed_union_head(AutoConfig.from_pretrained(name_or_path), name_or_path)
    # fp32 weights whatever the checkpoint stores: the shipped default is fp16 on disk, and training
    # it as stored would update fp16 weights (mixed precision is the Trainer's bf16/fp16 flags' job).
    model = training_class(model_type).from_pretrained(
        name_or_path, num_labels=2, id2label=ID2LABEL, label2id=LABEL2ID, dtype=torch.float32
    )
    if reversed_head:
        _swap_head_rows(model, name_or_path)
    if isinstance(model, BertForUnionTraining):
        model.reconstruction_weight = float(reconstruction_weight)
    return model


def uses_reconstruction(model: PreTrainedModel) -> bool:
    """Whether ``model`` is trained with the reconstruction term (its batches need the targets)."""
    return isinstance(model, BertForUnionTraining) and bool(model.reconstruction_weight)


def export_classifier(model: PreTrainedModel, normalization: StoryNormalization) -> PreTrainedModel:
    """The plain classifier the ``union`` metric loads: same weights, no reconstruction head.

    A ``BertForUnionTraining`` becomes a ``BertForSequenceClassification``; another encoder's
    classifier is already one. The text normalisation of the training data is recorded in
    ``config.union_normalization``.
    """
    if not isinstance(model, BertForUnionTraining):
        model.config.id2label = dict(ID2LABEL)
        model.config.label2id = dict(LABEL2ID)
        setattr(model.config, CONFIG_KEY, normalization.to_dict())
        return model.eval()
    config = copy.deepcopy(model.config)
    config.architectures = ["BertForSequenceClassification"]
    config.id2label = dict(ID2LABEL)
    config.label2id = dict(LABEL2ID)
    setattr(config, CONFIG_KEY, normalization.to_dict())
    classifier = BertForSequenceClassification(config)
    # the classifier's own weights: the reconstruction head (cls.*) and any head trained beside it stay out
    wanted = classifier.state_dict().keys()
    state = {k: v for k, v in model.state_dict().items() if k in wanted}
    classifier.load_state_dict(state, strict=True)
    return classifier.eval()


def export_trainer_checkpoint(
    checkpoint: str | os.PathLike, output_dir: str | os.PathLike, normalization: StoryNormalization
) -> pathlib.Path:
    """Write a resumable ``checkpoint-N`` folder of a run as the folder the ``union`` metric loads.

    The Trainer's checkpoints of a BERT run keep the reconstruction head, and no checkpoint
    records the normalisation (the run adds it only to its final export), so they are loaded as
    the training model and exported like the final one: same classifier weights, the run's
    ``normalization``, its tokenizer.
    """
    output = pathlib.Path(output_dir)
    trained = training_class(AutoConfig.from_pretrained(checkpoint).model_type).from_pretrained(checkpoint)
    export_classifier(trained, normalization).save_pretrained(output)
    AutoTokenizer.from_pretrained(checkpoint).save_pretrained(output)
    return output
