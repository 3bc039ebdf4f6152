"""Loading a UNION checkpoint: the tokenizer and classifier, or one error naming it, the cause and what to do."""

from __future__ import annotations

import pathlib
import re

import torch
import transformers
from safetensors import SafetensorError

from story_quality.checkpoints.files import CHECKPOINT_LAYOUT, local_checkpoint_problem
from story_quality.checkpoints.hub_reach import hub_lookup_options
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.devices import non_finite_tensor
from story_quality.text_checks import unknown_share
from story_quality.union.checkpoints import CheckpointError, alternative_hint

# A UNION checkpoint's class names by index, as training/train_union.py writes them (DESIGN principle 1).
UNION_LABELS = ("perturbed", "human")
PERTURBED_LABEL, HUMAN_LABEL = UNION_LABELS


def refuse_unscorable(encoded, tokenizer) -> list[float]:
    """Each story's share of word pieces unknown to the vocabulary; a story whose every word piece
    is unknown (a script the vocabulary lacks) has nothing to score and is refused, naming it."""
    special = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    story_of = encoded.story_of or range(len(encoded.input_ids))
    pieces: dict[int, list[int]] = {}
    for story, row in zip(story_of, encoded.input_ids, strict=True):
        pieces.setdefault(story, []).extend(row)
    shares = [unknown_share(pieces.get(i, []), tokenizer.unk_token_id, special) for i in range(len(pieces))]
    for i, row in sorted(pieces.items()):
        if not set(row) - special - {tokenizer.unk_token_id}:
            raise ValueError(
                f"predictions[{i}] has nothing the model can read: after normalisation every word piece is "
                f"unknown to its vocabulary ({tokenizer.unk_token}); score text in the checkpoint's language."
            )
    return shares


def load_checkpoint(checkpoint: CheckpointReference):
    """Tokenizer, classifier (fp32: the shipped fp16 weights are upcast) and the index of its "human"
    class, or one clear error."""
    name, source = checkpoint.name, checkpoint.source
    kwargs = {} if checkpoint.revision is None else {"revision": checkpoint.revision}
    problem = local_checkpoint_problem(pathlib.Path(source)) if checkpoint.local else None
    if problem:
        raise CheckpointError(
            f"Cannot load the UNION checkpoint {name!r} from the local folder {source}: {problem}. A UNION "
            f"checkpoint folder holds {CHECKPOINT_LAYOUT} (what training/train_union.py writes). "
            f"{alternative_hint()}"
        )
    lookup, unreachable = hub_lookup_options(source, checkpoint.local)
    kwargs.update(lookup)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
        model, loading = transformers.AutoModelForSequenceClassification.from_pretrained(
            source, use_safetensors=True, dtype=torch.float32, output_loading_info=True, **kwargs
        )
        model.eval()
    except (OSError, ValueError, SafetensorError) as error:
        where = (
            "the local folder"
            if checkpoint.local
            else "the Hugging Face Hub (there is no local folder of that name either)"
        )
        cause = str(error).strip().splitlines()[0].rstrip(".") if str(error).strip() else type(error).__name__
        if unreachable:
            cause = f"{unreachable}, and it is not in the local cache"
        raise CheckpointError(
            f"Cannot load the UNION checkpoint {name!r} ({source}) from {where}: {cause}. "
            f"A UNION checkpoint is a sequence classifier with safetensors weights, a config and a "
            f"tokenizer. {alternative_hint()}"
        ) from error
    if loading["missing_keys"]:
        missing = sorted(loading["missing_keys"])
        raise CheckpointError(
            f"Cannot use {name!r} ({source}) as a UNION checkpoint: its weights lack {', '.join(missing[:4])}"
            f"{', ...' if len(missing) > 4 else ''}, so that part would be randomly initialised and every score "
            "meaningless (a bare encoder or another task's model, not a trained classifier). "
            f"{alternative_hint()}"
        )
    broken = non_finite_tensor(model)
    if broken is not None:
        raise CheckpointError(
            f"Cannot use {name!r} ({source}) as a UNION checkpoint: its tensor {broken} holds NaN or infinite "
            "weights, so every score would be NaN (a diverged training run or an fp16 overflow). "
            f"{alternative_hint()}"
        )
    return tokenizer, model, human_label_index(model.config, source)


def human_label_index(config, source: str) -> int:
    """The index of the class meaning "human-written", by the one rule of what a UNION checkpoint is.

    Its two labels are ``perturbed`` and ``human`` (in either order, any case), as
    ``training/train_union.py`` writes them (``{0: "perturbed", 1: "human"}``); the score is the
    probability of the class named human. Any other classifier is refused by name, so that no
    other model's probability comes back as a union score: a CoLA-style acceptability model
    (``unacceptable``/``acceptable``), a sentiment model, or one with transformers' unnamed
    ``LABEL_0``/``LABEL_1`` (which class is human cannot be told; the message says how to name them).
    """
    labels = {
        int(i): str(label) for i, label in sorted(config.id2label.items(), key=lambda item: int(item[0]))
    }
    by_name = {label.lower(): i for i, label in labels.items()}
    if config.num_labels == 2 and set(by_name) == {HUMAN_LABEL, PERTURBED_LABEL}:
        return by_name[HUMAN_LABEL]
    raise CheckpointError(
        f"Cannot use {source} as a UNION checkpoint: its {config.num_labels} labels are {labels}; "
        f"{_why_not_union(set(by_name), config.num_labels)} A UNION checkpoint is a two-class classifier labelled "
        f"{dict(enumerate(UNION_LABELS))} (what training/train_union.py writes). {alternative_hint()}"
    )


def _why_not_union(names: set[str], count: int) -> str:
    """What a classifier with these (lower-cased) label names is, said in the refusal."""
    if count != 2:
        return f"a UNION checkpoint has 2, not {count}."
    if names == {"acceptable", "unacceptable"}:
        return (
            "it is an acceptability (CoLA-style) classifier, such as GRUEN's grammaticality model: its "
            "P(acceptable) is not a union score (the gruen metric reads such a model)."
        )
    if all(re.fullmatch(r"label_\d+", name) for name in names):
        return (
            "these are transformers' unnamed labels, so which class means a human story cannot be told. If "
            "the model was trained as UNION is, with class 1 for human stories, name them and save the "
            'config: config.id2label = {0: "perturbed", 1: "human"}; config.label2id = {"perturbed": 0, '
            '"human": 1}; config.save_pretrained(FOLDER).'
        )
    return "its classes are not named perturbed and human, so which probability would be a union score cannot be told."
