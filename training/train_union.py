"""Train a UNION checkpoint: an encoder told human stories from corrupted ones (BERT: plus reconstruction).

    accelerate launch training/train_union.py \\
        --model_name_or_path google-bert/bert-base-uncased \\
        --dataset path/to/union_pairs --normalization roc \\
        --annotated_file ant_data.txt --output_dir union-roc [--push_to_hub]

``--dataset`` is the negative-sampled dataset of ``training/build_union_data.py`` (a folder
saved with ``save_to_disk`` or a JSON/CSV/Parquet file with columns text, label, original,
context, story_index), or a story corpus (anything ``training.corpora.load_stories``
reads, or a file with a ``text`` column), which is then negative-sampled on the fly.
All arguments can also come from one JSON or YAML file: ``train_union.py config.json`` (or ``.yaml``).

The output folder holds what the ``union`` metric loads: a plain
``BertForSequenceClassification`` (safetensors, reconstruction head left out) whose config
records the text normalisation, its tokenizer, and a model card with the run's results.
An encoder other than BERT (MPNet, RoBERTa, ...) trains, with ``--reconstruction_weight 0``,
as its own ``AutoModelForSequenceClassification`` and is saved as that.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import datasets
import numpy as np
import transformers
from huggingface_hub import EvalResult
from transformers import AutoTokenizer, HfArgumentParser, Trainer, set_seed

from story_quality.evaluation.annotations import AnnotatedStories, read_annotations
from story_quality.evaluation.correlation import METHODS, correlate
from story_quality.training import run_setup
from story_quality.training.acceptability import (
    AcceptabilityBatches,
    AcceptabilityTrainer,
    attach_acceptability_head,
    file_sha256,
    read_acceptability_batches,
)
from story_quality.training.distillation import (
    TEACHER_COLUMN,
    check_teacher_scores,
    teacher_sha256,
)
from story_quality.training.model_cards import (
    base_model_licence,
    base_model_names,
    corpus_texts,
    hub_id_or_none,
    recipe_rows,
    render_model_card,
    table_rows,
    write_model_card,
)
from story_quality.training.negatives.build import read_summary
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.output_folders import check_resumed_run, write_run_record
from story_quality.training.ranking import RANKING_LOSSES, SEVERITY_SOURCES, severities
from story_quality.training.union_model import (
    DEFAULT_RECONSTRUCTION_WEIGHT,
    SEVERITY_COLUMN,
    STORY_COLUMN,
    UnionDataCollator,
    add_placeholder_tokens,
    check_encoder,
    encode_union_examples,
    export_classifier,
    load_union_model,
    uses_reconstruction,
)
from story_quality.training.union_pairs import load_pairs, split_held_out
from story_quality.training.union_presets import PRESETS, CorpusPreset
from story_quality.union import CITATION
from story_quality.union.encoding import MIN_WINDOW
from story_quality.union.scorer import scorer_for

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        default="google-bert/bert-base-uncased",
        metadata={
            "help": "Encoder to start from (Hub id or folder); UNION used bert-base-uncased. BERT-family "
            "encoders train with reconstruction; others (MPNet, ...) as their own classifier, "
            "with --reconstruction_weight 0."
        },
    )
    reconstruction_weight: float = field(
        default=DEFAULT_RECONSTRUCTION_WEIGHT,
        metadata={"help": "lambda in loss = cls + lambda * reconstruction (paper: 0.1); 0 turns it off."},
    )
    max_length: int = field(
        default=200, metadata={"help": "Word pieces kept per story, [CLS]/[SEP] included (head kept)."}
    )
    distillation_weight: float = field(
        default=0.0,
        metadata={
            "help": "w in cls = (1 - w) * CE(label) + w * CE(teacher): the share of the classification "
            "loss taught by the rows' teacher column (training/teacher_scores.py adds it); 0: off."
        },
    )
    ranking_loss: str = field(
        default="none",
        metadata={
            "help": "A pairwise loss between rows of one story ordered by severity (training/ranking.py): "
            "none, margin or bradley_terry; batches then hold whole stories.",
            "choices": list(RANKING_LOSSES),
        },
    )
    ranking_weight: float = field(
        default=0.0,
        metadata={
            "help": "w in loss = reconstruction + (1 - w) * classification + w * ranking (1: the ranking "
            "loss instead of the binary one); needs --ranking_loss."
        },
    )
    severity_source: str = field(
        default="perturbations",
        metadata={
            "help": "Where a copy's severity comes from: perturbations (the number of edits it got), "
            "kind (fluent < LM or n-gram continuation < edited) or both.",
            "choices": list(SEVERITY_SOURCES),
        },
    )
    acceptability_file: str | None = field(
        default=None,
        metadata={
            "help": "CoLA's raw TSV (e.g. in_domain_train.tsv): its sentences, normalised as the stories "
            "are, train a second, acceptability head on the encoder (training/acceptability.py); the "
            "exported classifier leaves that head out. BERT encoders only; needs --acceptability_weight."
        },
    )
    acceptability_weight: float = field(
        default=0.0,
        metadata={
            "help": "w in loss += w * CE(acceptability head) on one CoLA batch per step (0: off); needs "
            "--acceptability_file."
        },
    )
    acceptability_batch_size: int = field(
        default=32, metadata={"help": "CoLA sentences in each step's acceptability batch."}
    )


@dataclass
class DataArguments(run_setup.PreparationArguments):
    dataset: str = field(
        metadata={
            "help": "Negative-sampled pairs (save_to_disk folder or .json/.jsonl/.csv/.parquet with columns "
            "text,label,original,context,story_index), or a story corpus to negative-sample on the fly "
            "(a source training.corpora.load_stories reads, or a file with a text column)."
        }
    )
    normalization: str = field(
        default="roc",
        metadata={
            "help": "Text normalisation of the stories, recorded in the checkpoint: roc (lowercased, "
            "PTB tokens, name placeholders) or wp (cased, PTB tokens). Also picks the model card.",
            "choices": sorted(PRESETS),
        },
    )
    dataset_split: str = field(default="train", metadata={"help": "Split to read from --dataset."})
    text_column: str | None = field(
        default=None, metadata={"help": "Story column of a story corpus (default: the corpus loader's)."}
    )
    validation_dataset: str | None = field(
        default=None, metadata={"help": "Held-out pairs (same formats as --dataset); default: a split of it."}
    )
    validation_fraction: float = field(
        default=0.05,
        metadata={
            "help": "Fraction of the stories held out (with their corrupted copies) when no "
            "--validation_dataset is given; 0 disables evaluation."
        },
    )
    annotated_file: str | None = field(
        default=None,
        metadata={
            "help": "Human-annotated stories in UNION's 'ID ||| story ||| votes' format; the run "
            "reports Pearson/Spearman/Kendall of the scores with the mean vote."
        },
    )


@dataclass
class UnionTrainingArguments(run_setup.RunArguments):
    """``TrainingArguments`` with UNION's defaults (AdamW, lr 5e-5, 10 % warm-up, batch 10)."""

    per_device_train_batch_size: int = field(
        default=10, metadata={"help": "Batch size per device (UNION: 10)."}
    )
    per_device_eval_batch_size: int = field(
        default=32, metadata={"help": "Evaluation batch size per device."}
    )


# --- data ------------------------------------------------------------------------------------


def read_annotated_file(path: str) -> AnnotatedStories:
    """UNION's annotation file (errors name the line); correlations need at least 3 stories."""
    annotated = read_annotations(path)
    if len(annotated) < 3:
        raise ValueError(f"{path}: {len(annotated)} annotated stories; correlations need at least 3.")
    return annotated


def compute_accuracy(prediction: transformers.EvalPrediction) -> dict[str, float]:
    logits = (
        prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
    )
    return {"accuracy": float((np.argmax(logits, axis=-1) == prediction.label_ids).mean())}


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Run:
    """One run's settings, fixed before any work: arguments, corpus preset, resume point, annotations, encoder type."""

    model_args: ModelArguments
    data_args: DataArguments
    args: UnionTrainingArguments
    preset: CorpusPreset
    repo_id: str
    push: bool
    checkpoint: str | None
    annotated: AnnotatedStories | None
    model_type: str


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    run = parse_run(argv)
    tokenizer, added = load_tokenizer(run)
    train, validation = prepare_pairs(run)
    check_and_record_data(run, train)
    model = load_model(run, tokenizer, added)
    trainer, results = train_model(run, model, tokenizer, train, validation)
    if not trainer.is_world_process_zero():
        return results
    classifier = save_classifier(run, trainer, tokenizer)
    results.update(score_annotated_stories(run, trainer))
    write_card(run, results, classifier, trainer, facts=training_facts(run, train, validation), added=added)
    if run.push:
        run_setup.push_run(
            run.args, run.repo_id, f"UNION ({run.preset.name}) trained with train_union.py", logger
        )
    return results


def check_run_numbers(model_args: ModelArguments, args: UnionTrainingArguments) -> None:
    """Refuse numbers that would train a useless model or fail deep inside torch, naming the flag."""
    if not MIN_WINDOW <= model_args.max_length <= 4096:
        raise ValueError(
            f"--max_length must be between {MIN_WINDOW} and 4096 word pieces, got {model_args.max_length}."
        )
    weight = model_args.reconstruction_weight
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"--reconstruction_weight must be a finite number >= 0 (0: off), got {weight}.")
    if not 0 <= model_args.distillation_weight <= 1:  # NaN fails too
        raise ValueError(
            f"--distillation_weight must be between 0 and 1 (0: off), got {model_args.distillation_weight}."
        )
    check_ranking(model_args)
    check_acceptability(model_args)
    for flag, value in (
        ("--learning_rate", args.learning_rate),
        ("--num_train_epochs", args.num_train_epochs),
    ):
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{flag} must be a finite number > 0, got {value}.")
    if args.per_device_train_batch_size < 1:
        raise ValueError(
            f"--per_device_train_batch_size must be >= 1, got {args.per_device_train_batch_size}."
        )


def check_ranking(model_args: ModelArguments) -> None:
    """Refuse a ranking weight out of range, or one without a ranking loss (or the reverse), by name."""
    kind, weight = model_args.ranking_loss, model_args.ranking_weight
    if not 0 <= weight <= 1:  # NaN fails too
        raise ValueError(f"--ranking_weight must be between 0 and 1 (0: off), got {weight}.")
    if (kind == "none") != (weight == 0):
        raise ValueError(
            f"--ranking_loss {kind} with --ranking_weight {weight}: a ranking loss needs a weight above 0, "
            "and a weight needs --ranking_loss margin or bradley_terry."
        )


def check_acceptability(model_args: ModelArguments) -> None:
    """Refuse an acceptability weight out of range, or one without a CoLA file (or the reverse), by name."""
    path, weight = model_args.acceptability_file, model_args.acceptability_weight
    if not 0 <= weight <= 1:  # NaN fails too
        raise ValueError(f"--acceptability_weight must be between 0 and 1 (0: off), got {weight}.")
    if bool(path) != bool(weight):
        raise ValueError(
            f"--acceptability_file {path} with --acceptability_weight {weight}: the acceptability head "
            "needs both a CoLA file and a weight above 0."
        )
    if path and not os.path.isfile(path):
        raise ValueError(f"--acceptability_file {path}: no such file.")
    if model_args.acceptability_batch_size < 1:
        raise ValueError(
            f"--acceptability_batch_size must be >= 1, got {model_args.acceptability_batch_size}."
        )


def parse_run(argv: Sequence[str] | None) -> Run:
    """Arguments and everything that can fail in seconds (bad flags, folders, annotation files)."""
    parser = HfArgumentParser((ModelArguments, DataArguments, UnionTrainingArguments), description=__doc__)
    model_args, data_args, args = run_setup.parse_arguments(parser, argv)
    run_setup.configure_logging(args, logger)
    preset = PRESETS[data_args.normalization]
    args.label_names = ["labels"]
    try:
        check_run_numbers(model_args, args)
    except ValueError as error:
        run_setup.refuse(error)  # one line on stderr, exit status 2: no traceback
    run_setup.check_local_paths((model_args, data_args))
    push, repo_id = run_setup.push_target(args, logger)  # before any work: where, or who is unknown
    model_type = check_encoder(
        model_args.model_name_or_path, model_args.reconstruction_weight, model_args.max_length
    )
    if model_args.acceptability_weight and model_type != "bert":
        run_setup.refuse(
            ValueError(
                f"--acceptability_weight trains a head on a BERT encoder's pooled [CLS]; "
                f"{model_args.model_name_or_path} is a {model_type} encoder."
            )
        )
    checkpoint = run_setup.resume_checkpoint(args)
    if checkpoint:
        check_resumed_run(checkpoint, run_facts(model_args, data_args))
    annotated = read_annotated_file(data_args.annotated_file) if data_args.annotated_file else None
    set_seed(args.seed)
    return Run(
        model_args,
        data_args,
        args,
        preset,
        repo_id,
        push,
        checkpoint,
        annotated,
        model_type,
    )


def load_tokenizer(run: Run) -> tuple[transformers.PreTrainedTokenizerBase, list[str]]:
    """The encoder's tokenizer with UNION's name placeholders as single tokens."""
    tokenizer = AutoTokenizer.from_pretrained(run.model_args.model_name_or_path)
    added = add_placeholder_tokens(tokenizer)
    tokenizer.model_max_length = run.model_args.max_length
    return tokenizer, added


def prepare_pairs(run: Run) -> tuple[datasets.Dataset, datasets.Dataset | None]:
    """Training and held-out pairs: read, or negative-sampled from stories, then split by story."""
    data_args, args = run.data_args, run.args
    normalization = run.preset.normalization
    pairs_only = (
        f"--distillation_weight {run.model_args.distillation_weight} reads the teachers' scores of built "
        "rows: build them with training/build_union_data.py, score them with training/teacher_scores.py"
        if run.model_args.distillation_weight
        else None
    )
    with args.main_process_first(desc="loading and negative-sampling the stories"):
        pairs = load_pairs(data_args.dataset, data_args, normalization, args.seed, pairs_only)
        if data_args.validation_dataset:
            train, validation = (
                pairs,
                load_pairs(data_args.validation_dataset, data_args, normalization, args.seed, pairs_only),
            )
        else:
            train, validation = split_held_out(pairs, data_args.validation_fraction, args.seed)
        if data_args.max_train_samples is not None:
            train = train.select(range(min(data_args.max_train_samples, len(train))))
    train, validation = (
        taught_rows(rows, source, run.model_args.distillation_weight)
        for rows, source in (
            (train, data_args.dataset),
            (validation, data_args.validation_dataset or data_args.dataset),
        )
    )
    if run.model_args.distillation_weight or run.model_args.ranking_weight:
        args.remove_unused_columns = False  # teacher, story, severity: no arguments of the model's forward
    if validation is None:
        args.eval_strategy = transformers.IntervalStrategy.NO
    return train, validation


def taught_rows(rows: datasets.Dataset | None, source: str | None, weight: float) -> datasets.Dataset | None:
    """The rows with their teacher column where ``--distillation_weight`` uses it, without it where not."""
    if rows is None:
        return None
    if not weight:
        return rows.remove_columns(TEACHER_COLUMN) if TEACHER_COLUMN in rows.column_names else rows
    if TEACHER_COLUMN not in rows.column_names:
        raise ValueError(
            f"--distillation_weight {weight} needs a {TEACHER_COLUMN!r} column, which {source} lacks; "
            "add the teachers' scores with training/teacher_scores.py."
        )
    check_teacher_scores(rows, source)
    return rows


def training_facts(run: Run, train: datasets.Dataset, validation: datasets.Dataset | None) -> dict[str, Any]:
    """What the model card says about the training data (a local ``--dataset`` by its name, not its
    path); ``copies_text`` and ``corpora_text`` word the build summary the pairs carry."""
    try:
        summary = read_summary(train)  # build_union_data.py's, or the run's own negative sampling's
    except ValueError:  # pairs from a file: no summary recorded
        summary = None
    dataset = run.data_args.dataset
    return {
        "training examples": len(train),
        "human / corrupted": f"{sum(train['label'])} / {len(train) - sum(train['label'])}",
        "stories": len(set(train["story_index"])),
        "held-out examples": len(validation) if validation is not None else 0,
        "source": hub_id_or_none(dataset) or os.path.basename(dataset.rstrip("/\\")) or dataset,
        # without a summary: rows per story are the human story and its copy, once per copy
        **corpus_texts(
            summary, copies=max(1, round(len(train) / (2 * max(1, len(set(train["story_index"]))))))
        ),
    }


def load_model(
    run: Run, tokenizer: transformers.PreTrainedTokenizerBase, added: list[str]
) -> transformers.PreTrainedModel:
    with run_setup.quiet_load_report(logger, run.model_args.model_name_or_path):
        model = load_union_model(
            run.model_args.model_name_or_path, run.model_args.reconstruction_weight, run.model_type
        )
    if added or model.config.vocab_size < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
    if run.model_args.acceptability_weight:  # before the Trainer, so its optimiser holds the head
        attach_acceptability_head(model)
    if run.checkpoint:
        check_resumed_model(run.checkpoint, model.config)
    return model


# Configuration entries that fix the shapes of the weights: a checkpoint differing in one cannot be resumed.
SHAPE_KEYS = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
              "intermediate_size", "max_position_embeddings", "type_vocab_size")  # fmt: skip


def check_resumed_model(checkpoint: str, config: transformers.PretrainedConfig) -> None:
    """Fail before training when ``checkpoint`` holds another model than ``--model_name_or_path`` builds."""
    saved = transformers.AutoConfig.from_pretrained(checkpoint).to_dict()
    differences = [
        f"{key} {getattr(config, key, None)!r} (the checkpoint has {saved.get(key)!r})"
        for key in SHAPE_KEYS
        if saved.get(key) != getattr(config, key, None)
    ]
    if differences:
        raise ValueError(
            f"--resume_from_checkpoint {checkpoint} holds another model than --model_name_or_path "
            f"{config.name_or_path}: {'; '.join(differences)}."
        )


def run_facts(model_args: ModelArguments, data_args: DataArguments) -> dict[str, Any]:
    """What a resumed run must share with the run that saved the checkpoint (the data: its sha256)."""
    return {
        "--model_name_or_path": model_args.model_name_or_path,
        "--max_length": model_args.max_length,
        "--reconstruction_weight": model_args.reconstruction_weight,
        "--normalization": data_args.normalization,
        "--distillation_weight": model_args.distillation_weight,
        **(
            {
                "--ranking_loss": model_args.ranking_loss,
                "--ranking_weight": model_args.ranking_weight,
                "--severity_source": model_args.severity_source,
            }
            if model_args.ranking_weight
            else {}
        ),
        **(
            {
                "--acceptability_file (sha256)": file_sha256(model_args.acceptability_file),
                "--acceptability_weight": model_args.acceptability_weight,
                "--acceptability_batch_size": model_args.acceptability_batch_size,
            }
            if model_args.acceptability_weight and model_args.acceptability_file
            else {}
        ),
    }


def check_and_record_data(run: Run, train: datasets.Dataset) -> None:
    """Refuse to resume on other training pairs; record this run's settings and data for a later resume."""
    facts = {"training pairs of --dataset (sha256)": corpus_sha256(train)}
    if TEACHER_COLUMN in train.column_names:  # only where --distillation_weight reads it
        facts["teacher scores of --dataset (sha256)"] = teacher_sha256(train)
    if run.checkpoint:
        check_resumed_run(run.checkpoint, facts)
    if run.args.should_save:
        write_run_record(run.args.output_dir, {**run_facts(run.model_args, run.data_args), **facts})


def train_model(
    run: Run,
    model: transformers.PreTrainedModel,
    tokenizer: transformers.PreTrainedTokenizerBase,
    train: datasets.Dataset,
    validation: datasets.Dataset | None,
) -> tuple[Trainer, dict[str, float]]:
    """Tokenise, train, evaluate on the held-out pairs."""
    args, data_args = run.args, run.data_args

    def tokenise(split: datasets.Dataset, name: str) -> datasets.Dataset:
        features = split.map(
            encode_union_examples,
            batched=True,
            fn_kwargs={"tokenizer": tokenizer, "max_length": run.model_args.max_length},
            remove_columns=split.column_names,
            num_proc=data_args.preprocessing_num_workers,
            desc=f"Tokenising {name}",
        )
        # A classifier without the reconstruction term takes no targets (another encoder's rejects them).
        return features if uses_reconstruction(model) else features.remove_columns("reconstruction_labels")

    with args.main_process_first(desc="tokenisation"):
        train_features = tokenise(train, "training pairs")
        if run.model_args.ranking_weight:  # each row's story and severity, for the ranking loss
            source = run.model_args.severity_source
            train_features = train_features.add_column(STORY_COLUMN, list(train[STORY_COLUMN])).add_column(
                SEVERITY_COLUMN, severities(train, source, data_args.dataset)
            )
        eval_features = tokenise(validation, "held-out pairs") if validation is not None else None

    trainer = AcceptabilityTrainer(
        acceptability_weight=run.model_args.acceptability_weight,
        acceptability_batches=acceptability_batches(run, tokenizer),
        distillation_weight=run.model_args.distillation_weight,
        ranking_loss=run.model_args.ranking_loss,
        ranking_weight=run.model_args.ranking_weight,
        model=model,
        args=args,
        data_collator=UnionDataCollator(tokenizer),
        train_dataset=train_features,
        eval_dataset=eval_features,
        processing_class=tokenizer,
        compute_metrics=compute_accuracy,
    )
    results = run_setup.train_and_evaluate(trainer, run.checkpoint, evaluate=eval_features is not None)
    if trainer.acceptability_losses:  # this process's draws: the head's mean loss, first and last 50
        losses = trainer.acceptability_losses
        head = {
            "acceptability_loss_first_50": float(np.mean(losses[:50])),
            "acceptability_loss_last_50": float(np.mean(losses[-50:])),
        }
        trainer.log_metrics("acceptability", head)
        trainer.save_metrics(
            "acceptability", head
        )  # acceptability_results.json, merged into all_results.json
        results.update({f"train_{k}": v for k, v in head.items()})
    trainer.accelerator.wait_for_everyone()
    return trainer, results


def acceptability_batches(
    run: Run, tokenizer: transformers.PreTrainedTokenizerBase
) -> AcceptabilityBatches | None:
    """The CoLA batches of ``--acceptability_file``, normalised as the run's stories; None when off."""
    model_args = run.model_args
    if not (model_args.acceptability_weight and model_args.acceptability_file):
        return None
    return read_acceptability_batches(
        model_args.acceptability_file,
        tokenizer,
        run.preset.normalization,
        model_args.max_length,
        model_args.acceptability_batch_size,
        run.args.seed,
    )


def save_classifier(
    run: Run, trainer: Trainer, tokenizer: transformers.PreTrainedTokenizerBase
) -> transformers.PreTrainedModel:
    """The folder the metric loads: the classifier alone (no reconstruction head), its tokenizer."""
    classifier = export_classifier(trainer.model, run.preset.normalization)
    classifier.save_pretrained(run.args.output_dir, safe_serialization=True)
    tokenizer.save_pretrained(run.args.output_dir)
    logger.info("Saved the UNION classifier (no reconstruction head) to %s", run.args.output_dir)
    return classifier


def score_annotated_stories(run: Run, trainer: Trainer) -> dict[str, float]:
    """Correlations with people on the annotated stories, scored through the metric itself."""
    if run.annotated is None:
        return {}
    scorer = scorer_for(os.path.abspath(run.args.output_dir))
    stories = list(run.annotated.stories)
    scores = scorer.score(
        stories, batch_size=run.args.per_device_eval_batch_size, device=run.args.device
    ).scores
    measured = correlate(np.asarray(scores), run.annotated.human_scores)
    annotated_metrics = {f"annotated_{k}": measured.coefficient(k) for k in METHODS}
    trainer.log_metrics("annotated", annotated_metrics)
    trainer.save_metrics("annotated", annotated_metrics)
    return annotated_metrics


def write_card(
    run: Run,
    results: dict[str, float],
    classifier: transformers.PreTrainedModel,
    trainer: Trainer,
    *,
    facts: dict[str, Any],
    added: list[str],
) -> None:
    model_args, data_args, args = run.model_args, run.data_args, run.args
    base_model, base_model_text = base_model_names(model_args.model_name_or_path)
    corpus = {key: facts.pop(key) for key in ("copies_text", "corpora_text")}
    card = render_model_card(
        run.preset.card_template,
        model_name=run.repo_id.split("/")[-1],
        base_model=base_model,
        base_licence=base_model_licence(model_args.model_name_or_path),
        datasets=[d for d in [hub_id_or_none(data_args.dataset)] if d],
        eval_results=union_eval_results(results, data_args, run.annotated),
        repo_id=run.repo_id,
        base_model_text=base_model_text,
        **corpus,
        id2label=classifier.config.id2label,
        normalization=run.preset.normalization.to_dict(),
        max_length=model_args.max_length,
        training_data=table_rows(facts),
        recipe=recipe_rows(
            trainer,
            **{
                "reconstruction weight (lambda)": model_args.reconstruction_weight,
                **(
                    {
                        "distillation weight (share of the loss from the teachers' scores)": model_args.distillation_weight
                    }
                    if model_args.distillation_weight
                    else {}
                ),
                **(
                    {
                        "ranking loss (weight; severity from)": f"{model_args.ranking_loss} "
                        f"({model_args.ranking_weight}; {model_args.severity_source})"
                    }
                    if model_args.ranking_weight
                    else {}
                ),
                **(
                    {
                        "acceptability head (weight; CoLA sentences a step; file sha256)": f"{model_args.acceptability_weight} "
                        f"({model_args.acceptability_batch_size}; {file_sha256(model_args.acceptability_file)})"
                    }
                    if model_args.acceptability_weight and model_args.acceptability_file
                    else {}
                ),
                "max word pieces": model_args.max_length,
                "placeholder tokens added": ", ".join(added) or "none (already in the vocabulary)",
            },
        ),
        citation=union_citation(),
    )
    write_model_card(card, args.output_dir)


def union_eval_results(
    results: dict[str, float], data: DataArguments, annotated: AnnotatedStories | None
) -> list[EvalResult]:
    """The run's measurements as model-index entries."""
    corpus = PRESETS[data.normalization].corpus
    entries = []
    if "eval_accuracy" in results:
        entries.append(
            EvalResult(
                task_type="text-classification",
                task_name="Human vs. corrupted story classification",
                dataset_type=hub_id_or_none(data.validation_dataset or data.dataset)
                or f"{corpus.lower()}-union-pairs",
                dataset_name=f"{corpus} human/corrupted pairs (held out)",
                dataset_split="validation",
                metric_type="accuracy",
                metric_name="Accuracy",
                metric_value=results["eval_accuracy"],
            )
        )
    if annotated is not None:
        name = os.path.basename(data.annotated_file or "")
        for key, label in (("pearson", "Pearson"), ("spearman", "Spearman"), ("kendall", "Kendall")):
            value = results[f"annotated_{key}"]
            if not math.isfinite(value):  # constant scores: no correlation to report
                logger.warning("%s correlation is undefined (constant scores); left out of the card.", label)
                continue
            entries.append(
                EvalResult(
                    task_type="text-classification",
                    task_name="Story coherence (correlation with human judgement)",
                    dataset_type=f"{corpus.lower()}-union-annotations",
                    dataset_name=f"{corpus} human-annotated stories ({len(annotated)}, {name})",
                    dataset_split="test",
                    metric_type=key,
                    metric_name=f"{label} correlation with the mean vote",
                    metric_value=value,
                )
            )
    return entries


def union_citation() -> str:
    return CITATION.strip()


if __name__ == "__main__":
    sys.exit(run_setup.run_script(main))
