"""Build UNION's training set (human stories + one corrupted copy each) and save or push it.

Examples::

    python training/build_union_data.py mintujupally/ROCStories --output-dir data/union-roc-train
    python training/build_union_data.py euclaise/writingprompts --split train --num-proc 8 \\
        --output-dir data/union-wp-train
    python training/build_union_data.py my_stories.txt --push-to-hub me/union-train --private
    python training/build_union_data.py stories.txt references.txt --copies 3 \\
        --exclude-contexts-of ant_data.txt --output-dir data/union-roc-train

The summary (rows, skipped stories and why, corruption counts, normalisation, which NLTK
resources were used) is printed as JSON, stored in the dataset's ``info.description`` and
written next to the saved dataset as ``union_build_summary.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections import Counter

import datasets

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_held_out_stories
from story_quality.training.cli_types import at_least
from story_quality.training.corpora import (
    LOCAL_SUFFIXES,
    ROC_STORIES_HUB_ID,
    WRITING_PROMPTS_HUB_ID,
    drop_shared_contexts,
    held_out_contexts,
    load_stories,
)
from story_quality.training.negatives.build import build_union_copies, read_summary
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.negatives.corruptions import technique_probs_argument
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.training.negatives.ngram_continuations import (
    NgramOptions,
    replace_with_ngram_continuations,
    stories_opening_elsewhere,
)
from story_quality.training.output_folders import probe_writable, refuse_existing, written_whole
from story_quality.union.normalization import NAMED_NORMALIZATIONS, StoryNormalization

NORMALIZATIONS = {**NAMED_NORMALIZATIONS, "none": StoryNormalization()}
SUMMARY_FILE = "union_build_summary.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = ScriptParser(
        description=(
            "Turn a corpus of human stories into UNION's training set: every story (label 1 = human) "
            "plus one copy corrupted by repetition, substitution, reordering and/or negation "
            "(label 0 = perturbed), sentence 0 never touched. Reproducible: the same seed gives "
            "the same corpus for any --num-proc and --batch-size."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Examples::", 1)[1],
    )
    add_source_arguments(parser)
    add_corruption_arguments(parser)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    return args


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """The stories read: sources, splits, columns, WritingPrompts segments, normalisation, held-out contexts."""
    parser.add_argument(
        "source",
        nargs="+",
        help=(
            f"Hub dataset id (ROCStories: {ROC_STORIES_HUB_ID}, WritingPrompts: {WRITING_PROMPTS_HUB_ID}) "
            f"or a local file ({', '.join(LOCAL_SUFFIXES)}; .txt = one story per line); several are joined"
        ),
    )
    parser.add_argument(
        "--copies",
        type=at_least(1),
        default=1,
        help="corrupted copies per story, each with its own corpus seed (seed, seed+1, ...) and its human "
        "row; UNION made 1 (default: 1)",
    )
    parser.add_argument(
        "--exclude-contexts-of",
        metavar="FILE",
        help="drop stories whose first sentence opens a story of FILE (UNION's 'ID ||| story ||| votes' "
        "annotations or one story per line): keeps an evaluation set's contexts out of training",
    )
    parser.add_argument("--split", default="train", help="Hub split to read (default: train)")
    parser.add_argument("--text-column", help="column holding the stories (default: found from the columns)")
    parser.add_argument(
        "--max-rows", type=at_least(1), help="use only the first N stories of each source (quick runs)"
    )
    parser.add_argument(
        "--wp-segments",
        type=at_least(1),
        default=1,
        help="read each WritingPrompts story (prompt + story rows) as up to N consecutive texts of about "
        "200 words, each later one opening with its own first sentence; 1 = the prompt and the story's "
        "first ~200 words, as UNION did (default: 1)",
    )
    parser.add_argument(
        "--normalization",
        choices=[*NORMALIZATIONS, "auto"],
        default="auto",
        help="text normalisation: roc (lowercase, [MALE]/[FEMALE]/[NEUTRAL], PTB tokens), wp (PTB tokens, "
        "cased) or none; auto = wp for a WritingPrompts source, else roc",
    )


def add_corruption_arguments(parser: argparse.ArgumentParser) -> None:
    """How the corrupted copies are made: seed, workers, techniques, word knowledge, n-gram continuations."""
    parser.add_argument("--seed", type=int, default=42, help="corpus seed (default: 42)")
    parser.add_argument("--num-proc", type=at_least(1), help="worker processes for datasets.map")
    parser.add_argument(
        "--batch-size", type=at_least(1), default=1000, help="datasets.map batch size (default: 1000)"
    )
    parser.add_argument(
        "--min-sentences", type=at_least(2), default=3, help="skip shorter stories (default: 3; at least 2)"
    )
    parser.add_argument(
        "--technique-probs",
        type=technique_probs_argument,
        default=None,
        metavar="NAME=W,...",
        help="technique weights replacing the paper's repetition=0.1,substitution=0.3,reordering=0.4,"
        "negation=0.2 (left out: 0); grammar (grammar-breaking edits inside sentences, "
        "training/negatives/grammar.py) is our addition",
    )
    parser.add_argument(
        "--tagger", choices=["auto", "nltk", "heuristic"], default="auto", help="POS tagger (default: auto)"
    )
    parser.add_argument(
        "--wordnet",
        choices=["auto", "nltk", "debian", "none"],
        default="auto",
        help="antonyms/lemmas source: NLTK's download, Debian's wordnet-base, or none (default: auto)",
    )
    parser.add_argument(
        "--conceptnet", help="ConceptNet 5 assertions file (.csv or .csv.gz) for keywords/antonyms"
    )
    parser.add_argument(
        "--ngram-fraction",
        type=float,
        default=0.0,
        help="replace this share of the corrupted copies by n-gram continuations of the story's opening "
        "(training/negatives/ngram_continuations.py; each story continued by the model of the other "
        "half of the corpus; default: 0)",
    )
    parser.add_argument(
        "--ngram-order", type=at_least(2), default=4, help="n of the n-gram model (default: 4)"
    )
    parser.add_argument(
        "--ngram-corpus",
        nargs="+",
        metavar="FILE",
        help="fit the n-gram model on these human stories instead (local files read like the sources, "
        "normalised like the corpus; stories opening like a corpus story or an --exclude-contexts-of "
        "story left out); with --ngram-fraction",
    )


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the corpus goes: a folder and/or a Hub dataset repo."""
    parser.add_argument(
        "--output-dir",
        help="save the dataset here (datasets.save_to_disk); written beside it and moved into place when complete",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an --output-dir that already exists and is not empty",
    )
    parser.add_argument("--push-to-hub", metavar="REPO_ID", help="push the dataset to this Hub dataset repo")
    parser.add_argument("--private", action="store_true", help="make the pushed Hub repo private")


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Usage errors no argparse type can see: nothing to do, a source twice, a share outside [0, 1], a missing file."""
    if not args.output_dir and not args.push_to_hub:
        parser.error("nothing to do: give --output-dir and/or --push-to-hub")
    repeated = sorted({s for s in args.source if args.source.count(s) > 1})
    if repeated:
        parser.error(f"source {repeated[0]} is given twice: its stories would be trained on twice")
    if not 0.0 <= args.ngram_fraction <= 1.0:
        parser.error(f"--ngram-fraction must be between 0 and 1, got {args.ngram_fraction}")
    if args.exclude_contexts_of and not os.path.isfile(args.exclude_contexts_of):
        parser.error(f"--exclude-contexts-of {args.exclude_contexts_of}: no such file")
    if args.ngram_corpus and not args.ngram_fraction:
        parser.error(
            "--ngram-corpus fits the model of --ngram-fraction's continuations: give --ngram-fraction too"
        )
    for path in args.ngram_corpus or []:
        if not os.path.isfile(path):
            parser.error(f"--ngram-corpus {path}: no such file")


def ngram_model_texts(
    sources: list[str],
    corpus: datasets.Dataset,
    normalization: StoryNormalization,
    held_out: list[str],
    num_proc: int | None,
) -> tuple[list[str], dict]:
    """The normalised texts of ``sources`` that open no story of ``corpus`` or ``held_out``, and a
    summary of them (sources, stories kept and left out)."""
    stories = datasets.concatenate_datasets([load_stories(source) for source in sources])

    def normalise(batch: dict[str, list]) -> dict[str, list]:
        return {
            "sentences": [
                [" ".join(s.split()) for s in normalization.sentences(text)] if text else []
                for text in batch["text"]
            ]
        }

    normalised = stories.map(
        normalise,
        batched=True,
        num_proc=num_proc,
        remove_columns=stories.column_names,
        desc="Normalising the n-gram model's stories",
    )
    contexts = set(corpus["context"])
    contexts.update(held_out_contexts(held_out, normalization))
    texts, dropped = stories_opening_elsewhere(normalised["sentences"], contexts)
    return texts, {"sources": sources, "stories": len(texts), "dropped_shared_contexts": dropped}


def with_ngram_continuations(
    dataset: datasets.Dataset,
    fraction: float,
    seed: int,
    order: int,
    model_texts: tuple[list[str], dict] | None = None,
) -> datasets.Dataset:
    """The corpus with ``fraction`` of its corrupted copies replaced, its summary (counts, sha256) updated.

    ``model_texts``: the texts and summary of :func:`ngram_model_texts`, or None for the corpus's
    own other half.
    """
    summary = read_summary(dataset)
    replaced_corpus, replaced = replace_with_ngram_continuations(
        dataset, fraction, seed, NgramOptions(order=order), None if model_texts is None else model_texts[0]
    )
    corruptions = Counter(
        name
        for names, label in zip(replaced_corpus["corruptions"], replaced_corpus["label"], strict=True)
        if label == 0
        for name in names
    )
    summary["corruptions"] = dict(sorted(corruptions.items()))
    summary["ngram_continuations"] = {"fraction": fraction, "seed": seed, "order": order, "rows": replaced}
    if model_texts is not None:
        summary["ngram_continuations"]["model_corpus"] = model_texts[1]
    summary["sha256"] = corpus_sha256(replaced_corpus)
    replaced_corpus.info.description = json.dumps(summary, sort_keys=True)
    return replaced_corpus


def continue_openings(
    args: argparse.Namespace, dataset: datasets.Dataset, normalization: StoryNormalization
) -> datasets.Dataset:
    """``--ngram-fraction``'s continuations, from ``--ngram-corpus``'s model or the corpus's own."""
    model_texts = None
    if args.ngram_corpus:
        try:
            model_texts = ngram_model_texts(
                args.ngram_corpus,
                dataset,
                normalization,
                read_held_out_stories(args.exclude_contexts_of) if args.exclude_contexts_of else [],
                args.num_proc,
            )
        except (ValueError, FileNotFoundError) as error:
            raise SystemExit(f"error: {error}") from None
        if not model_texts[0]:
            raise SystemExit(
                f"error: --ngram-corpus {' '.join(args.ngram_corpus)}: no story left to fit the n-gram "
                "model on (every one opens like a story of the corpus or of --exclude-contexts-of)"
            )
    return with_ngram_continuations(dataset, args.ngram_fraction, args.seed, args.ngram_order, model_texts)


def drop_duplicate_stories(stories: datasets.Dataset) -> tuple[datasets.Dataset, int]:
    """The stories with every repeat of an identical text removed (first kept), and the count removed.

    A story present twice would get two indexes, so its copies could land on both sides of the
    train/held-out split.
    """
    seen: set[str] = set()

    def first(text: str | None) -> bool:
        if text is None:
            return True
        if text in seen:
            return False
        seen.add(text)
        return True

    kept = stories.filter(first, input_columns="text", desc="Dropping repeated stories")
    return kept, len(stories) - len(kept)


def choose_normalization(name: str, source: str) -> StoryNormalization:
    if name == "auto":
        name = "wp" if "writingprompts" in source.lower() else "roc"
    return NORMALIZATIONS[name]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.output_dir:
        try:
            refuse_existing(
                args.output_dir,
                args.overwrite,
                inputs=[
                    *args.source,
                    *([args.exclude_contexts_of] if args.exclude_contexts_of else []),
                    *(args.ngram_corpus or []),
                ],
            )
            probe_writable(args.output_dir)
        except (FileExistsError, PermissionError) as error:
            raise SystemExit(f"error: {error}") from None
    normalization = choose_normalization(args.normalization, args.source[0])
    try:  # a bad corpus file is the user's to fix: its name and line, not a traceback
        stories = datasets.concatenate_datasets(
            [
                load_stories(
                    source,
                    split=args.split,
                    text_column=args.text_column,
                    max_rows=args.max_rows,
                    segments=args.wp_segments,
                )
                for source in args.source
            ]
        )
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"error: {error}") from None
    stories, repeated = drop_duplicate_stories(stories)
    if repeated:
        logging.info("dropped %d repeated stories (identical text)", repeated)
    if args.exclude_contexts_of:
        stories, dropped = drop_shared_contexts(
            stories, read_held_out_stories(args.exclude_contexts_of), normalization
        )
        logging.info("dropped %d stories sharing a context with %s", dropped, args.exclude_contexts_of)
    dataset = build_union_copies(
        stories,
        copies=args.copies,
        normalization=normalization,
        seed=args.seed,
        num_proc=args.num_proc,
        batch_size=args.batch_size,
        min_sentences=args.min_sentences,
        technique_probs=args.technique_probs,
        lexicon=Lexicon(tagger=args.tagger, wordnet=args.wordnet, conceptnet=args.conceptnet),
    )
    if args.ngram_fraction:
        dataset = continue_openings(args, dataset, normalization)
    summary = read_summary(dataset)
    if len(dataset) == 0:
        raise SystemExit(
            f"error: no story survived ({json.dumps(summary['skipped'])}, repeated: {repeated}); nothing was "
            "saved. Check the sources, --max-rows, --min-sentences and --exclude-contexts-of."
        )
    summary["sources"] = list(args.source)
    summary["wp_segments"] = args.wp_segments
    summary["repeated_stories_dropped"] = repeated
    if args.exclude_contexts_of:
        summary["excluded_shared_contexts"] = {"of": args.exclude_contexts_of, "stories": dropped}
    dataset.info.description = json.dumps(summary, sort_keys=True)
    if args.output_dir:
        with written_whole(args.output_dir) as scratch:
            dataset.save_to_disk(scratch)
            (scratch / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, sort_keys=True))
    if args.push_to_hub:
        dataset.push_to_hub(args.push_to_hub, private=args.private)
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
