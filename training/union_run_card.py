"""The model card of a UNION run: what it says about the training data, the recipe, the measured results."""

from __future__ import annotations

import logging
import math
import os
from typing import Any

import datasets
import transformers
from huggingface_hub import EvalResult
from transformers import Trainer

from story_quality.evaluation.annotations import AnnotatedStories
from story_quality.training.acceptability import file_sha256
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
from story_quality.training.union_arguments import DataArguments, Run
from story_quality.training.union_presets import PRESETS
from story_quality.union import CITATION

logger = logging.getLogger(__name__)


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
