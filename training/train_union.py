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
import os
import sys
from collections.abc import Sequence

import datasets
import numpy as np
import transformers
from transformers import AutoTokenizer, HfArgumentParser, Trainer, set_seed

from story_quality.evaluation.annotations import AnnotatedStories, read_annotations
from story_quality.evaluation.correlation import METHODS, correlate
from story_quality.training import run_setup
from story_quality.training.acceptability import attach_acceptability_head
from story_quality.training.distillation import TEACHER_COLUMN, check_teacher_scores, teacher_sha256
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.output_folders import check_resumed_run, write_run_record
from story_quality.training.ranking import severities
from story_quality.training.union_arguments import (
    DataArguments,
    ModelArguments,
    Run,
    UnionTrainingArguments,
    check_run_numbers,
    run_facts,
)
from story_quality.training.union_model import (
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
from story_quality.training.union_presets import PRESETS
from story_quality.training.union_run_card import training_facts, write_card
from story_quality.training.union_trainer import UnionTrainer, run_loss_terms
from story_quality.union.scorer import scorer_for

logger = logging.getLogger(__name__)


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

    trainer = UnionTrainer(
        terms=run_loss_terms(run, tokenizer),
        model=model,
        args=args,
        data_collator=UnionDataCollator(tokenizer),
        train_dataset=train_features,
        eval_dataset=eval_features,
        processing_class=tokenizer,
        compute_metrics=compute_accuracy,
    )
    results = run_setup.train_and_evaluate(trainer, run.checkpoint, evaluate=eval_features is not None)
    for term in trainer.terms:  # what a term measured in this process (the head's loss, first and last 50)
        measured = term.results()
        if measured:
            trainer.log_metrics(term.name, measured)
            trainer.save_metrics(term.name, measured)  # <name>_results.json, merged into all_results.json
            results.update({f"train_{k}": v for k, v in measured.items()})
    trainer.accelerator.wait_for_everyone()
    return trainer, results


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


if __name__ == "__main__":
    sys.exit(run_setup.run_script(main))
