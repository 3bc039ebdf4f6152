"""Average the weights of classifier checkpoints fine-tuned from one encoder (a uniform model soup).

Runs of one UNION recipe that differ only in their seeds agree with people to different degrees;
averaging their predictions costs one forward pass per run. Fine-tuned copies of one pretrained
encoder usually stay in one basin of the loss, so averaging their *weights* (Wortsman et al.,
ICML 2022, "Model soups") gives a single checkpoint that scores at the cost of one model. Whether
it agrees with people better than its members is an empirical question: measure it
(``experiments/union_soup_roc.py``; what it gave on this project's runs is in
``benchmarks/RESULTS.md``). The result is an ordinary checkpoint: the ``union`` metric (or GRUEN,
for CoLA models) loads it like any other.

    python training/average_checkpoints.py --output-dir outputs/union-soup run1/checkpoint run2/checkpoint

Checkpoints must agree on everything but their weights (configuration, vocabulary and the rest of
the tokenizer, tensor names and shapes); the first difference found is an error that names the
checkpoint and item.
Members must also share their *initialisation*, the freshly drawn classifier head included
(one ``--seed`` for ``train_union.py``, other data): runs that start from different heads end
with weight matrices that point apart, and averaging those squeezes the scores together. A weight
matrix whose members point apart (cosine below ``MIN_ALIGNMENT``) is warned about, by name.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch.nn import functional as F
from transformers import AutoModelForSequenceClassification, AutoTokenizer, PretrainedConfig

from story_quality.checkpoints.reference import CheckpointReference, repeated_checkpoint
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.devices import non_finite_tensor
from story_quality.training.output_folders import (
    OutputKind,
    check_output_folder,
    probe_writable,
    written_whole,
)

# Configuration entries that say where or how a checkpoint was saved, not what it computes.
PROVENANCE_KEYS = frozenset({"_name_or_path", "transformers_version", "dtype", "torch_dtype"})
MEMBERS_FILE = "average_checkpoints.json"
# Fine-tuned copies of one start stay near 1; independent random draws are near 0.
MIN_ALIGNMENT = 0.5
# What an average writes; a folder holding anything else (or no MEMBERS_FILE) is never replaced.
SOUP = OutputKind(
    "average_checkpoints",
    "an averaged checkpoint",
    MEMBERS_FILE,
    frozenset(
        {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
         "special_tokens_map.json", "vocab.txt", "added_tokens.json", "chat_template.jinja"}
    ),
)  # fmt: skip


# Tokenizer arguments that say where a tokenizer was loaded from, not how it splits text.
TOKENIZER_PROVENANCE_KEYS = frozenset(
    {
        "name_or_path",
        "is_local",
        "local_files_only",
        "vocab_file",
        "merges_file",
        "tokenizer_file",
        "_commit_hash",
    }
)
# Parts of a fast tokenizer's file that are the state of the last call, or the vocabulary (checked alone).
TOKENIZER_STATE_KEYS = frozenset({"truncation", "padding", "version"})


class CheckpointMismatch(ValueError):
    """Two checkpoints differ in something other than their weights, so they cannot be averaged."""


def comparable_config(config: PretrainedConfig) -> dict[str, Any]:
    return {k: v for k, v in config.to_dict().items() if k not in PROVENANCE_KEYS}


def comparable_tokenizer(tokenizer: Any) -> dict[str, Any]:
    """How a tokenizer splits text, item by item: its arguments (lower-casing, special tokens, window)
    and a fast tokenizer's normaliser, pre-tokeniser, post-processor, decoder and model settings;
    not where it was loaded from, nor its vocabulary (compared on its own)."""
    items = {
        key: repr(value)
        for key, value in tokenizer.init_kwargs.items()
        if key not in TOKENIZER_PROVENANCE_KEYS
    }
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        for part, value in json.loads(backend.to_str()).items():
            if part == "model":
                items.update({f"model.{k}": v for k, v in value.items() if k not in ("vocab", "merges")})
            elif part not in TOKENIZER_STATE_KEYS:
                items[part] = value
    return items


def refuse_non_finite(model: torch.nn.Module, name: str) -> None:
    """Fail naming the checkpoint and tensor when a weight is NaN or infinite (every score would be NaN)."""
    key = non_finite_tensor(model)
    if key is not None:
        raise ValueError(
            f"{name}: tensor {key} holds NaN or infinite weights; this checkpoint scores nothing."
        )


def load_member(name: str) -> tuple[Any, Any]:
    """The classifier and tokenizer of a checkpoint folder or Hub id; a missing one is named, not a Hub traceback."""
    path = pathlib.Path(name)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} is a file, not a checkpoint folder.")
    checkpoint = CheckpointReference.parse(name)
    try:
        return (
            AutoModelForSequenceClassification.from_pretrained(
                checkpoint.source, revision=checkpoint.revision
            ),
            AutoTokenizer.from_pretrained(checkpoint.source, revision=checkpoint.revision),
        )
    except (OSError, ValueError) as error:
        if path.is_dir():
            raise ValueError(f"{name}: not a loadable checkpoint ({str(error).splitlines()[0]})") from None
        raise ValueError(
            f"{name}: no such checkpoint folder, and no Hub model of that name could be loaded "
            f"({str(error).splitlines()[0]})"
        ) from None


def _first_difference(reference: dict[str, Any], other: dict[str, Any]) -> str | None:
    for key in sorted(reference.keys() | other.keys()):
        if reference.get(key, "<absent>") != other.get(key, "<absent>"):
            return f"{key}: {reference.get(key, '<absent>')!r} != {other.get(key, '<absent>')!r}"
    return None


def average_state_dicts(
    states: Sequence[dict[str, torch.Tensor]], names: Sequence[str]
) -> dict[str, torch.Tensor]:
    """The elementwise mean of floating-point tensors (summed in float64); other tensors must be equal."""
    reference, reference_name = states[0], names[0]
    for state, name in zip(states[1:], names[1:], strict=True):
        if state.keys() != reference.keys():
            extra = sorted(state.keys() - reference.keys())
            missing = sorted(reference.keys() - state.keys())
            raise CheckpointMismatch(
                f"{name} has other tensors than {reference_name}: extra {extra[:5]}, missing {missing[:5]}"
            )
        for key, tensor in state.items():
            if tensor.shape != reference[key].shape or tensor.dtype != reference[key].dtype:
                raise CheckpointMismatch(
                    f"{name}: tensor {key} is {tuple(tensor.shape)} {tensor.dtype}, "
                    f"but {tuple(reference[key].shape)} {reference[key].dtype} in {reference_name}"
                )
            if not tensor.is_floating_point() and not torch.equal(tensor, reference[key]):
                raise CheckpointMismatch(
                    f"{name}: non-float tensor {key} differs from {reference_name}'s and cannot be averaged"
                )
    averaged = {}
    for key, tensor in reference.items():
        if tensor.is_floating_point():
            total = sum(state[key].to(torch.float64) for state in states)
            averaged[key] = (total / len(states)).to(tensor.dtype)
        else:
            averaged[key] = tensor.clone()
    return averaged


def least_aligned(states: Sequence[dict[str, torch.Tensor]], names: Sequence[str]) -> tuple[float, str, str]:
    """The lowest cosine between a member's weight matrix and the first member's: (cosine, tensor, member)."""
    lowest = (1.0, "", "")
    for state, name in zip(states[1:], names[1:], strict=True):
        for key, tensor in states[0].items():
            if tensor.is_floating_point() and tensor.dim() >= 2:
                cosine = F.cosine_similarity(
                    tensor.flatten().double(), state[key].flatten().double(), dim=0
                ).item()
                lowest = min(lowest, (cosine, key, name))
    return lowest


def average_checkpoints(
    checkpoints: Sequence[str | os.PathLike], output_dir: str | os.PathLike, overwrite: bool = False
) -> pathlib.Path:
    """Write the uniform weight average of ``checkpoints`` (two or more) to ``output_dir``.

    The configuration and tokenizer are the first checkpoint's (all must agree); the members are
    listed in ``average_checkpoints.json`` beside them. ``output_dir`` is checked before any
    work: never a member, a file or a folder another tool wrote; an earlier average only with
    ``overwrite``. It is written beside and moved into place when complete.
    """
    names = [os.fspath(c) for c in checkpoints]
    if len(names) < 2:
        raise ValueError(f"Averaging needs at least two checkpoints, got {len(names)}: {names}")
    repeated = repeated_checkpoint(names)  # "run", "run/", "./run" and a copy of run are one
    if repeated:
        first, again, why = repeated
        raise ValueError(f"Checkpoint {again!r} is {first!r} again ({why}); a soup averages distinct runs")
    try:
        check_output_folder(output_dir, SOUP, overwrite, inputs=[n for n in names if os.path.exists(n)])
        probe_writable(output_dir)
    except (FileExistsError, PermissionError) as error:
        raise ValueError(str(error)) from None
    models, tokenizers = zip(*(load_member(name) for name in names), strict=True)
    reference_config = comparable_config(models[0].config)
    reference_vocab = tokenizers[0].get_vocab()
    reference_tokenizer = comparable_tokenizer(tokenizers[0])
    for name, model, tokenizer in zip(names[1:], models[1:], tokenizers[1:], strict=True):
        difference = _first_difference(reference_config, comparable_config(model.config))
        if difference is not None:
            raise CheckpointMismatch(f"{name}'s configuration differs from {names[0]}'s: {difference}")
        if tokenizer.get_vocab() != reference_vocab:
            raise CheckpointMismatch(f"{name}'s vocabulary differs from {names[0]}'s")
        difference = _first_difference(reference_tokenizer, comparable_tokenizer(tokenizer))
        if difference is not None:
            raise CheckpointMismatch(f"{name}'s tokenizer differs from {names[0]}'s: {difference}")
    for model, name in zip(models, names, strict=True):
        refuse_non_finite(model, name)
    states = [model.state_dict() for model in models]
    averaged = average_state_dicts(states, names)
    cosine, tensor, member = least_aligned(states, names)
    if cosine < MIN_ALIGNMENT:
        warnings.warn(
            f"{member}'s {tensor} points away from {names[0]}'s (cosine {cosine:.2f}): the runs probably "
            "started from different random draws (another --seed), and their average is likely to "
            "score worse than either run; train the members with one train_union.py --seed",
            stacklevel=2,
        )
    soup = models[0]
    soup.load_state_dict(averaged, strict=True)
    with written_whole(output_dir) as scratch:
        soup.save_pretrained(scratch)
        tokenizers[0].save_pretrained(scratch)
        (scratch / MEMBERS_FILE).write_text(json.dumps({"averaged": names}, indent=1) + "\n")
    return pathlib.Path(output_dir)


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+", help="two or more checkpoint directories or Hub ids")
    parser.add_argument(
        "--output-dir",
        type=pathlib.Path,
        required=True,
        help="where the average is saved (a new or empty folder, or an earlier average with --overwrite)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an --output-dir holding an earlier average"
    )
    args = parser.parse_args(argv)
    try:
        output = average_checkpoints(args.checkpoints, args.output_dir, args.overwrite)
    except ValueError as error:  # a mismatch or bad list: a usage error, not a traceback
        parser.error(str(error))
    print(f"Averaged {len(args.checkpoints)} checkpoints into {output}")


if __name__ == "__main__":
    main()
