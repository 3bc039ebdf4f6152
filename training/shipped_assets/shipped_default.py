"""Turn a trained UNION folder into the shipped default: the checkpoint inside the project, union's "default".

    python training/shipped_assets/shipped_default.py outputs/union-roc-minilm --note card_note.md

Writes the weights as fp16 safetensors (half the size; the metric upcasts them to fp32), the
config (with its text normalisation), the tokenizer and the run's model card into
``metrics/union/default_checkpoint/``, then a ``SHA256SUMS`` manifest of those files, and prints
the manifest's own sha256, which ``story_quality/union/checkpoints.py`` records
(``SHIPPED_DEFAULT_MANIFEST_SHA256``): the metric checks both at every load.
"""

from __future__ import annotations

import argparse
import pathlib

import torch
import transformers

from story_quality.checkpoints.files import sha256_of
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.devices import non_finite_tensor
from story_quality.options import check_choice
from story_quality.training.output_folders import (
    OutputKind,
    check_output_folder,
    probe_writable,
    written_whole,
)
from story_quality.union.checkpoints import MANIFEST, PUBLISHED_CHECKPOINTS, SHIPPED_DEFAULT_FOLDER
from story_quality.union.normalization import CONFIG_KEY, NAMES_SHA256
from story_quality.union.options import LONG_STORIES, LONG_STORIES_CONFIG_KEY

DEFAULT_TARGET = pathlib.Path(__file__).resolve().parents[2] / "metrics" / "union" / SHIPPED_DEFAULT_FOLDER
SIZE_LIMIT_BYTES = 48 * 10**6
CARD = "README.md"
# What an export writes; a --target holding anything else is someone's folder, never replaced.
CHECKPOINT_FILES = frozenset(
    {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
     "vocab.txt", CARD, MANIFEST}
)  # fmt: skip
# An earlier export (it has the manifest) is replaced without a flag: the default --target is the
# shipped default, which each new default replaces. Anything else is never written into.
EXPORT = OutputKind("an export", "an exported checkpoint", MANIFEST, CHECKPOINT_FILES)


def check_export_paths(source: pathlib.Path, target: pathlib.Path) -> None:
    """Fail before any work: ``source`` must be a folder, ``target`` an earlier export or new, never the source."""
    if not source.is_dir():
        raise FileNotFoundError(
            f"{source}: no such folder; give a folder written by training/train_union.py."
            if not source.exists()
            else f"{source} is a file; give a folder written by training/train_union.py."
        )
    check_output_folder(target, EXPORT, None, inputs=[source], option="--target")
    if source.resolve() in target.resolve().parents:
        raise FileExistsError(
            f"--target {target} lies inside the source {source}; choose a folder outside it."
        )
    probe_writable(target, "--target")


def check_weights(model: transformers.PreTrainedModel, source: pathlib.Path, what: str) -> None:
    """Fail naming the tensor when a weight is NaN or infinite (fp16 overflows past 65504)."""
    key = non_finite_tensor(model)
    if key is not None:
        raise ValueError(f"{source}: tensor {key} holds NaN or infinite weights{what}; nothing was written.")


def check_size(model: transformers.PreTrainedModel, source: pathlib.Path) -> None:
    """Fail before writing when the fp16 weights alone exceed the limit."""
    weights = sum(t.numel() for t in model.state_dict().values()) * 2
    if weights > SIZE_LIMIT_BYTES:
        raise ValueError(
            f"{source}: its fp16 weights take {weights / 1e6:.1f} MB, over the {SIZE_LIMIT_BYTES / 1e6:.0f} MB "
            "limit of the shipped default; nothing was written."
        )


def export_shipped_default(
    source: pathlib.Path,
    target: pathlib.Path,
    note: str | None = None,
    hub_id: str | None = None,
    card: str | None = None,
    long_stories: str | None = None,
) -> str:
    """Write ``source`` (a folder ``train_union.py`` made) to ``target`` in fp16; returns the manifest's sha256.

    ``note`` (markdown) is inserted into the run's model card before its "Results" section;
    ``hub_id``, the repository the card was rendered for, is replaced in its code examples by
    the shipped names (``evaluate.load(metric_path("union"))``, the shipped folder). Refuses a
    checkpoint that records no text normalisation, and a folder over 48 MB. ``card`` (markdown)
    replaces the run's card whole. A normalisation that tags names but records no name table gets
    the sha256 of the table this package carries: the export must run with the version that
    trained the checkpoint. ``long_stories`` ("head" or "windows") is recorded as the reading the
    metric uses by default for stories longer than the window (the one it was validated with).
    """
    if long_stories is not None:
        check_choice(long_stories, "long_stories", LONG_STORIES)
    check_export_paths(source, target)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float32)
    check_weights(model, source, "")
    check_size(model, source)
    if getattr(model.config, CONFIG_KEY, None) is None:
        raise ValueError(f"{source} records no '{CONFIG_KEY}' in its config: not a UNION training output.")
    recorded = getattr(model.config, CONFIG_KEY)
    if recorded.get("replace_names") and "names_sha256" not in recorded:
        model.config.union_normalization = {**recorded, "names_sha256": NAMES_SHA256}
    if long_stories is not None:
        setattr(model.config, LONG_STORIES_CONFIG_KEY, long_stories)
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    model.half()
    check_weights(model, source, " in fp16 (a weight beyond fp16's range)")
    card = shipped_card(source, note, hub_id, card)
    with written_whole(target) as scratch:  # the old export stays until the new one passed every check
        model.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
        (scratch / CARD).write_text(card)
        files = sorted(p for p in scratch.iterdir() if p.is_file() and p.name != MANIFEST)
        total = sum(p.stat().st_size for p in files)
        if total > SIZE_LIMIT_BYTES:
            raise ValueError(
                f"{target} would hold {total / 1e6:.1f} MB, over the {SIZE_LIMIT_BYTES / 1e6:.0f} MB limit; "
                "nothing was changed."
            )
        (scratch / MANIFEST).write_text("".join(f"{sha256_of(p)}  {p.name}\n" for p in files))
    return sha256_of(target / MANIFEST)


def shipped_card(source: pathlib.Path, note: str | None, hub_id: str | None, card: str | None) -> str:
    """The run's card (or ``card``) with the shipped names for ``hub_id`` and ``note`` before its results."""
    if card is None:
        card = (source / CARD).read_text() if (source / CARD).is_file() else ""
    if hub_id:
        card = card.replace(
            f'evaluate.load(metric_path("union"), "{hub_id}")', 'evaluate.load(metric_path("union"))'
        )
        card = card.replace(
            f'from_pretrained("{hub_id}")', f'from_pretrained("metrics/union/{SHIPPED_DEFAULT_FOLDER}")'
        )
    if note:
        marker = "## Results of this training run"
        card = (
            card.replace(marker, note.rstrip() + "\n\n" + marker, 1) if marker in card else card + "\n" + note
        )
    return card


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=pathlib.Path, help="a folder written by training/train_union.py")
    parser.add_argument(
        "--target",
        type=pathlib.Path,
        default=DEFAULT_TARGET,
        help=f"default: metrics/union/{SHIPPED_DEFAULT_FOLDER} of this clone",
    )
    parser.add_argument(
        "--note", type=pathlib.Path, help="markdown inserted into the model card (commands, corpus)"
    )
    parser.add_argument(
        "--hub-id",
        default=PUBLISHED_CHECKPOINTS["roc"],
        help="the Hub id the run's card was rendered for, replaced by the shipped names (default: %(default)s)",
    )
    parser.add_argument("--card", type=pathlib.Path, help="markdown that replaces the run's model card whole")
    parser.add_argument(
        "--long-stories",
        choices=LONG_STORIES,
        help="record how the metric reads stories longer than the window with this checkpoint "
        "(default: nothing recorded, i.e. head)",
    )
    args = parser.parse_args(argv)
    try:
        note = args.note.read_text() if args.note else None
        card = args.card.read_text() if args.card else None
        digest = export_shipped_default(args.source, args.target, note, args.hub_id, card, args.long_stories)
    except (OSError, ValueError) as error:  # a usage error naming the folder, not a traceback
        parser.error(str(error))
    print(
        f"wrote {args.target}; set SHIPPED_DEFAULT_MANIFEST_SHA256 = {digest!r} in story_quality/union/checkpoints.py"
    )


if __name__ == "__main__":
    main()
