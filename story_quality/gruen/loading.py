"""Loading GRUEN's three models safely (safetensors only, no remote code, pinnable revision)
and keeping them on the metric instance so repeated ``compute`` calls never reload them."""

from __future__ import annotations

import dataclasses
import functools
import pathlib

import torch
from safetensors import SafetensorError
from transformers import (
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from story_quality.bert_forward.classifier import BertClassifierFastPath, supports_fast_path
from story_quality.bert_forward.packed_layers import BertLayers, supports_bert_layers
from story_quality.checkpoints.files import CHECKPOINT_LAYOUT, local_checkpoint_problem
from story_quality.checkpoints.hub_reach import hub_lookup_options
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.devices import non_finite_tensor
from story_quality.model_window import model_window

MODEL_CLASSES = {
    "lm": AutoModelForMaskedLM,
    "cola": AutoModelForSequenceClassification,
    "sop": AutoModelForPreTraining,
}
ROLE_NAMES = {
    "lm": "masked LM (lm_model)",
    "cola": "CoLA classifier (cola_model)",
    "sop": "sentence-order model (sop_model)",
}


@dataclasses.dataclass(frozen=True)
class LoadedModel:
    tokenizer: PreTrainedTokenizerBase
    model: PreTrainedModel
    window: int  # longest input, special tokens included, the model accepts

    @functools.cached_property
    def bert_layers(self) -> BertLayers | None:
        """The encoder's layers with fused projections, packed on a CPU, where it is a plain BERT
        (a masked LM's): built once per loaded model."""
        encoder = getattr(self.model, "base_model", None)
        return BertLayers(encoder) if supports_bert_layers(encoder) else None

    @functools.cached_property
    def classifier_fast_path(self) -> BertClassifierFastPath | None:
        """The exact lean forward of a plain BERT classifier (the CoLA model's), built once."""
        return BertClassifierFastPath(self.model) if supports_fast_path(self.model) else None


def load_model(role: str, checkpoint: CheckpointReference, device: torch.device) -> LoadedModel:
    """Load one model and its tokenizer; a local directory is only read, never written."""
    name, source, revision, local = checkpoint.name, checkpoint.source, checkpoint.revision, checkpoint.local
    problem = local_checkpoint_problem(pathlib.Path(source)) if local else None
    if problem:
        raise OSError(
            f"GRUEN could not load its {ROLE_NAMES[role]} from the local folder {source}: {problem}. Each of "
            f"GRUEN's model folders holds {CHECKPOINT_LAYOUT} (what save_pretrained writes)."
        )
    lookup, unreachable = hub_lookup_options(source, local)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, revision=revision, **lookup)
        model, loading = MODEL_CLASSES[role].from_pretrained(
            source, revision=revision, use_safetensors=True, trust_remote_code=False, output_loading_info=True,
            **lookup,
        )  # fmt: skip
    except (OSError, ValueError, SafetensorError) as error:
        cause = f"{unreachable}, and it is not in the local cache" if unreachable else str(error).strip()
        raise OSError(
            f"GRUEN could not load its {ROLE_NAMES[role]} from {name!r} (revision {revision!r}). "
            f"Cause: {cause.rstrip('.')}. Offline, pass a local folder instead: "
            f"{role}_model='/path/to/folder', holding {CHECKPOINT_LAYOUT} (what save_pretrained writes)."
        ) from error
    # A head missing from the weights would be randomly initialised: scores that mean nothing.
    head_missing = sorted(
        k for k in loading["missing_keys"] if not k.startswith(f"{model.base_model_prefix}.")
    )
    if head_missing:
        raise OSError(
            f"GRUEN cannot use {name!r} as its {ROLE_NAMES[role]}: its weights lack {', '.join(head_missing[:4])}"
            f"{', ...' if len(head_missing) > 4 else ''}, so that head would be randomly initialised (a bare "
            "encoder or a model of another task). Pass a checkpoint trained for this role."
        )
    broken = non_finite_tensor(model)
    if broken is not None:
        raise OSError(
            f"GRUEN cannot use {name!r} as its {ROLE_NAMES[role]}: its tensor {broken} holds NaN or infinite "
            "weights, so every score would be NaN (a diverged training run or an fp16 overflow)."
        )
    model = model.to(device).eval()
    return LoadedModel(tokenizer=tokenizer, model=model, window=model_window(tokenizer, model.config))


class ModelCache:
    """One loaded model per role, reloaded only when its name, revision or device changes."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple, LoadedModel]] = {}

    def get(self, role: str, checkpoint: CheckpointReference, device: torch.device) -> LoadedModel:
        key = (checkpoint, str(device))
        cached = self._entries.get(role)
        if cached is None or cached[0] != key:
            self._entries[role] = (key, load_model(role, checkpoint, device))
        return self._entries[role][1]
