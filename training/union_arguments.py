"""A UNION training run's options (``train_union.py``'s flags), their checks, and the settings fixed before any work."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from story_quality.evaluation.annotations import AnnotatedStories
from story_quality.training import run_setup
from story_quality.training.acceptability import file_sha256
from story_quality.training.ranking import RANKING_LOSSES, SEVERITY_SOURCES
from story_quality.training.union_model import DEFAULT_RECONSTRUCTION_WEIGHT
from story_quality.training.union_presets import PRESETS, CorpusPreset
from story_quality.union.encoding import MIN_WINDOW


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
