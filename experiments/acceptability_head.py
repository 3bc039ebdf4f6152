"""How well a UNION run's CoLA head learned: Matthews on a CoLA split, read back from a Trainer checkpoint.

The exported classifier leaves the acceptability head out, so it is read from the Trainer's own
``checkpoint-N`` folder, which keeps it. The sentences are normalised as the run's stories were.

    python -m experiments.acceptability_head outputs/union-grammar-cola-run/checkpoint-400 \\
        ../shared/data/cola/in_domain_dev.tsv
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch
from safetensors.torch import load_file
from transformers import AutoTokenizer

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training.acceptability import (
    ACCEPTABILITY_HEAD,
    AcceptabilityBatches,
    acceptability_logits,
    attach_acceptability_head,
    read_acceptability_batches,
)
from story_quality.training.cola_data import matthews_correlation
from story_quality.training.union_model import BertForUnionTraining
from story_quality.union.normalization import NAMED_NORMALIZATIONS


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="a Trainer checkpoint folder of a run with --acceptability_weight")
    parser.add_argument("cola_tsv", help="a CoLA split in its raw TSV form")
    parser.add_argument("--normalization", default="roc", choices=sorted(NAMED_NORMALIZATIONS))
    args = parser.parse_args(argv)
    weights = load_file(f"{args.checkpoint}/model.safetensors")
    head = {k.split(".", 1)[1]: v for k, v in weights.items() if k.startswith(ACCEPTABILITY_HEAD + ".")}
    if not head:
        parser.error(
            f"{args.checkpoint} holds no {ACCEPTABILITY_HEAD}: not a run with --acceptability_weight"
        )
    model = BertForUnionTraining.from_pretrained(args.checkpoint, reconstruction_weight=0.0)
    attach_acceptability_head(model).load_state_dict(head)
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    normalize = NAMED_NORMALIZATIONS[args.normalization]
    split = read_acceptability_batches(args.cola_tsv, tokenizer, normalize, 256, 1, 0)
    # one draw as large as the split is every sentence once
    whole = AcceptabilityBatches(split.input_ids, split.labels, len(split), 0, split.pad_id).batch(0)
    with torch.inference_mode():
        predicted = acceptability_logits(model.eval(), whole).argmax(-1).tolist()
    labels = whole["labels"].tolist()
    accuracy = sum(p == y for p, y in zip(predicted, labels, strict=True)) / len(labels)
    print(
        f"{len(labels)} sentences: Matthews {matthews_correlation(predicted, labels):.3f}, "
        f"accuracy {accuracy:.3f} (acceptable: {sum(labels) / len(labels):.3f})"
    )


if __name__ == "__main__":
    main()
