"""Fine-tune an encoder on CoLA: the acceptability model of GRUEN's grammaticality term.

    accelerate launch training/train_cola.py --output_dir gruen-cola [--push_to_hub]

Reads GLUE's CoLA from the Hub (``nyu-mll/glue``, config ``cola``) by default, or local
``--train_file``/``--validation_file``: CoLA's own raw release (``.tsv``: source, label, mark,
sentence; no header), or JSON lines, CSV or Parquet with ``sentence`` and ``label`` columns
(1 = acceptable). Several files joined by commas are one split (GLUE's validation set is
``in_domain_dev.tsv,out_of_domain_dev.tsv``). Reports the Matthews correlation on the validation
split, saves the classifier (safetensors) with its tokenizer and a model card, and
optionally pushes it. All arguments can also come from one JSON or YAML file.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import datasets
import numpy as np
import transformers
from huggingface_hub import EvalResult
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    HfArgumentParser,
    PreTrainedTokenizerBase,
    Trainer,
    set_seed,
)

from story_quality import citation
from story_quality.gruen import CITATION as GRUEN_CITATION
from story_quality.gruen.checkpoints import LM_CHECKPOINT
from story_quality.training import run_setup
from story_quality.training.cola_data import matthews_correlation, read_cola_tsv
from story_quality.training.model_cards import (
    base_model_licence,
    base_model_names,
    hub_id_or_none,
    recipe_rows,
    render_model_card,
    table_rows,
    write_model_card,
)

logger = logging.getLogger(__name__)

ID2LABEL = {0: "unacceptable", 1: "acceptable"}
LABEL2ID = {label: i for i, label in ID2LABEL.items()}
COLA_CITATION = citation("warstadt-etal-2019-neural").strip()


@dataclass
class ColaArguments(run_setup.PreparationArguments):
    model_name_or_path: str = field(
        default=LM_CHECKPOINT, metadata={"help": "Encoder to fine-tune (GRUEN: bert-base-cased)."}
    )
    dataset_name: str = field(default="nyu-mll/glue", metadata={"help": "Hub dataset holding CoLA."})
    dataset_config: str = field(default="cola", metadata={"help": "Its configuration."})
    train_file: str | None = field(
        default=None,
        metadata={
            "help": "Local training sentences: CoLA's raw .tsv, or .json/.jsonl/.csv/.parquet with sentence "
            "and label columns; several files joined by commas."
        },
    )
    validation_file: str | None = field(
        default=None, metadata={"help": "Local validation sentences, in the same format (commas join files)."}
    )
    max_length: int = field(default=128, metadata={"help": "Word pieces kept per sentence (GRUEN: 128)."})


@dataclass
class ColaTrainingArguments(run_setup.RunArguments):
    """``TrainingArguments`` with the usual GLUE fine-tuning defaults."""

    learning_rate: float = field(default=2e-5, metadata={"help": "AdamW peak learning rate."})
    per_device_train_batch_size: int = field(default=32, metadata={"help": "Batch size per device."})
    per_device_eval_batch_size: int = field(
        default=64, metadata={"help": "Evaluation batch size per device."}
    )
    num_train_epochs: float = field(default=3.0, metadata={"help": "Epochs over CoLA's 8,551 sentences."})


def compute_cola_metrics(prediction: transformers.EvalPrediction) -> dict[str, float]:
    predicted = np.argmax(prediction.predictions, axis=-1)
    return {
        "matthews_correlation": matthews_correlation(predicted, prediction.label_ids),
        "accuracy": float((predicted == prediction.label_ids).mean()),
    }


def load_cola(args: ColaArguments) -> datasets.DatasetDict:
    """CoLA's train and validation splits, from local files when given, else from the Hub."""
    if args.train_file or args.validation_file:
        if not (args.train_file and args.validation_file):
            raise ValueError(
                "Give both --train_file and --validation_file, or neither (then the Hub's CoLA)."
            )
        files = {"train": args.train_file.split(","), "validation": args.validation_file.split(",")}
        extensions = {os.path.splitext(f)[1].lower() for paths in files.values() for f in paths}
        known = {**run_setup.DATA_FILE_BUILDERS, ".tsv": "cola-raw"}
        builders = {known.get(e) for e in extensions}
        if len(builders) != 1 or None in builders:
            raise ValueError(f"--train_file/--validation_file must share one of {sorted(known)}.")
        builder = builders.pop()  # each split on its own, so a bad file is named, not a schema clash
        cola = {
            split: datasets.concatenate_datasets(
                [
                    read_cola_tsv(path)
                    if builder == "cola-raw"
                    else datasets.load_dataset(builder, data_files=path, split="train")
                    for path in paths
                ]
            )
            for split, paths in files.items()
        }
    else:
        cola = datasets.load_dataset(args.dataset_name, args.dataset_config)
    for split in ("train", "validation"):
        missing = {"sentence", "label"} - set(cola[split].column_names)
        if missing:
            raise ValueError(
                f"CoLA {split} split lacks column(s) {sorted(missing)}; it has {cola[split].column_names}."
            )
        labels = set(cola[split].unique("label"))
        if not labels <= {0, 1}:
            raise ValueError(f"CoLA {split} labels must be 0 or 1 (1 = acceptable), found {sorted(labels)}.")
    return datasets.DatasetDict({"train": cola["train"], "validation": cola["validation"]})


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = HfArgumentParser((ColaArguments, ColaTrainingArguments), description=__doc__)
    cola_args, args = run_setup.parse_arguments(parser, argv)
    run_setup.check_local_paths((cola_args,))
    run_setup.configure_logging(args, logger)
    push, repo_id = run_setup.push_target(args, logger)
    checkpoint = run_setup.resume_checkpoint(args)
    set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(cola_args.model_name_or_path)
    cola, features = load_tokenised_cola(cola_args, args, tokenizer)

    with run_setup.quiet_load_report(logger, cola_args.model_name_or_path):
        model = AutoModelForSequenceClassification.from_pretrained(
            cola_args.model_name_or_path, num_labels=2, id2label=ID2LABEL, label2id=LABEL2ID
        )
    trainer = Trainer(
        model=model,
        args=args,
        data_collator=DataCollatorWithPadding(tokenizer),
        train_dataset=features["train"],
        eval_dataset=features["validation"],
        processing_class=tokenizer,
        compute_metrics=compute_cola_metrics,
    )
    results = run_setup.train_and_evaluate(trainer, checkpoint)

    trainer.save_model(args.output_dir)  # classifier and tokenizer, safetensors, on the main process
    if not trainer.is_world_process_zero():
        return results
    write_cola_card(cola_args, args, trainer, cola, results, repo_id)

    if push:
        run_setup.push_run(args, repo_id, "CoLA classifier for GRUEN, trained with train_cola.py", logger)
    return results


def load_tokenised_cola(
    cola_args: ColaArguments, args: ColaTrainingArguments, tokenizer: PreTrainedTokenizerBase
) -> tuple[datasets.DatasetDict, datasets.DatasetDict]:
    """CoLA's train and validation sentences (train cut to ``--max_train_samples``), and their word pieces."""
    with args.main_process_first(desc="loading and tokenising CoLA"):
        cola = load_cola(cola_args)
        if cola_args.max_train_samples is not None:
            cola["train"] = cola["train"].select(range(min(cola_args.max_train_samples, len(cola["train"]))))
        features = cola.map(
            lambda batch: tokenizer(batch["sentence"], truncation=True, max_length=cola_args.max_length),
            batched=True,
            remove_columns=[c for c in cola["train"].column_names if c != "label"],
            num_proc=cola_args.preprocessing_num_workers,
            desc="Tokenising",
        )
    return cola, features


def write_cola_card(
    cola_args: ColaArguments,
    args: ColaTrainingArguments,
    trainer: Trainer,
    cola: datasets.DatasetDict,
    results: dict[str, float],
    repo_id: str,
) -> None:
    """The trained classifier's card (its data, validation scores and recipe) in ``args.output_dir``."""
    dataset_text = (
        f"{cola_args.dataset_name} ({cola_args.dataset_config})"
        if not cola_args.train_file
        else " / ".join(
            "+".join(os.path.basename(p) for p in paths.split(","))
            for paths in (cola_args.train_file, cola_args.validation_file or "")
        )
    )
    facts = {
        "data": dataset_text,
        "training sentences": len(cola["train"]),
        "acceptable / unacceptable": f"{sum(cola['train']['label'])} / {len(cola['train']) - sum(cola['train']['label'])}",
        "validation sentences": len(cola["validation"]),
    }
    dataset_id = None if cola_args.train_file else hub_id_or_none(cola_args.dataset_name)
    card = render_model_card(
        "gruen-cola",
        model_name=repo_id.split("/")[-1],
        base_model=base_model_names(cola_args.model_name_or_path)[0],
        base_licence=base_model_licence(cola_args.model_name_or_path),
        datasets=[dataset_id] if dataset_id else [],
        eval_results=[
            EvalResult(
                task_type="text-classification",
                task_name="Linguistic acceptability",
                dataset_type=dataset_id or "cola",
                dataset_name=f"CoLA ({dataset_text})",
                dataset_config=cola_args.dataset_config if dataset_id else None,
                dataset_split="validation",
                metric_type=metric,
                metric_name=name,
                metric_value=results[f"eval_{metric}"],
            )
            for metric, name in (("matthews_correlation", "Matthews correlation"), ("accuracy", "Accuracy"))
        ],
        repo_id=repo_id,
        base_model_text=base_model_names(cola_args.model_name_or_path)[1],
        id2label=trainer.model.config.id2label,
        max_length=cola_args.max_length,
        training_data=table_rows(facts),
        recipe=recipe_rows(
            trainer,
            **{"max word pieces": cola_args.max_length},
        ),
        citation=GRUEN_CITATION.strip() + "\n\n" + COLA_CITATION,
    )
    write_model_card(card, args.output_dir)


if __name__ == "__main__":
    sys.exit(run_setup.run_script(main))
