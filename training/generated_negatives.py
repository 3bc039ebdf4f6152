"""Negatives that read like generated stories: continuations sampled from a small story LM.

UNION's corruptions edit a human story in place; the generated stories that people rate lowest
are fluent text that loses the thread, which those corruptions never look like. So a share of
a built corpus's corrupted copies is replaced by continuations of the same story's opening,
sampled from a story LM. No English LM is reachable offline, so the LM is trained here from
scratch on the project's own human stories: a word-level GPT-2 over the normalised Penn Treebank
tokens, so that a sample is tokenised exactly like the human text it stands beside. Three steps:

    # 1. the LM's texts and the stories to continue, from corpora written by build_union_data.py
    python training/generated_negatives.py export union-mix-data \\
        --roc lm-roc --wp-fold lm-wp-even --wp-fold lm-wp-odd --out lm-work
    # 2. train the LM and sample two continuations a story (slow without a GPU; see benchmarks/RESULTS.md)
    python training/generated_negatives.py generate lm-work --out lm-work/generated.jsonl
    # 3. replace a share of the corpus's corrupted copies by the samples
    python training/generated_negatives.py replace union-mix-data lm-work/generated.jsonl \\
        union-mix-gen --fraction 0.25

Folds keep the LM from continuing a story it was trained on: the WritingPrompts stories come in
two halves (``--wp-fold`` twice), and each half is continued by an LM trained on the other half
and on the ROC stories of ``--roc`` (which must hold none of the corpus's ROC stories); the
corpus's ROC stories are shared between the two LMs by ``story_index`` parity. A ROC story is
continued from its first sentence to four more; a WritingPrompts text from its first two
sentences (the prompt and the story's first) to about its own length, cut at a sentence end. Of
the two samples per story (top-k 40), the first is decoded with 3-gram blocking (no 3-gram
twice, a common setting of story generators) and the second without.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Sequence
from typing import Any

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training.cli_types import at_least, positive_number
from story_quality.training.negatives.copy_replacement import replace_corpus
from story_quality.training.negatives.lm_continuations import export, generate
from story_quality.training.negatives.story_lm import LMOptions, SamplingOptions


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    step = commands.add_parser("export", help="write the LM's texts and the stories to continue")
    step.add_argument(
        "corpus", type=pathlib.Path, help="the corpus (build_union_data.py) whose negatives will be replaced"
    )
    step.add_argument(
        "--roc", type=pathlib.Path, required=True, help="a built corpus of ROC stories outside that corpus"
    )
    step.add_argument(
        "--wp-fold",
        type=pathlib.Path,
        action="append",
        required=True,
        help="a built corpus of one fold of the WritingPrompts stories (every segment); give two",
    )
    step.add_argument("--out", type=pathlib.Path, required=True, help="the work folder (new or empty)")
    step.add_argument("--overwrite", action="store_true", help="replace an --out holding an earlier export")
    step = commands.add_parser("generate", help="train an LM per fold and sample (a GPU if there is one)")
    step.add_argument("work", type=pathlib.Path, help="the folder written by export")
    step.add_argument(
        "--out",
        type=pathlib.Path,
        required=True,
        help="the samples, JSON lines (a new file, outside the inputs)",
    )
    step.add_argument("--overwrite", action="store_true", help="replace an --out holding earlier samples")
    step.add_argument("--vocabulary", type=at_least(1), default=40000, help="words kept (default: 40000)")
    step.add_argument("--width", type=at_least(1), default=512)
    step.add_argument("--layers", type=at_least(1), default=6)
    step.add_argument("--lm-epochs", type=at_least(1), default=10)
    step.add_argument("--lm-batch", type=at_least(1), default=128, help="windows of 256 words a step")
    step.add_argument("--lm-lr", type=positive_number, default=6e-4)
    step.add_argument("--gen-batch", type=at_least(1), default=1024, help="samples drawn together")
    step.add_argument(
        "--top-k", type=at_least(1), default=40, help="words a draw chooses among (default: 40)"
    )
    step.add_argument("--temperature", type=positive_number, default=1.0, help="above 0 (default: 1)")
    step.add_argument(
        "--margin", type=at_least(0), default=20, help="words a WritingPrompts sample may run past its story"
    )
    step.add_argument("--seed", type=int, default=7)
    step = commands.add_parser("replace", help="replace a share of the corpus's corrupted copies by samples")
    step.add_argument("corpus", type=pathlib.Path)
    step.add_argument("generated", type=pathlib.Path, help="the samples written by generate")
    step.add_argument("output_dir", type=pathlib.Path, help="a new or empty folder")
    step.add_argument(
        "--overwrite", action="store_true", help="replace an output_dir holding an earlier replace"
    )
    step.add_argument(
        "--fraction", type=float, default=0.25, help="share of corrupted copies replaced (default: 0.25)"
    )
    step.add_argument(
        "--domains", choices=["both", "roc", "wp"], default="both", help="whose copies may be replaced"
    )
    step.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        print(json.dumps(run_command(args)))
    except (OSError, ValueError) as error:  # the user's to fix: a usage error naming the file or option
        parser.error(str(error))


def run_command(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "export":
        return export(args.corpus, args.roc, args.wp_fold, args.out, args.overwrite)
    if args.command == "replace":
        return replace_corpus(
            args.corpus,
            args.generated,
            args.output_dir,
            fraction=args.fraction,
            domains=args.domains,
            seed=args.seed,
            overwrite=args.overwrite,
        )
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    lm = LMOptions(args.width, args.layers, args.lm_epochs, args.lm_batch, args.lm_lr, args.seed, device)
    sampling = SamplingOptions(args.top_k, args.temperature, args.margin, device=device)
    return generate(args.work, args.out, args.vocabulary, lm, sampling, args.gen_batch, args.overwrite)


if __name__ == "__main__":
    main()
