"""Train the fluency reader: a small sentence classifier of human prose against weak-generator sentences.

    python training/build_fluency_data.py outputs/corpora/roc_train.txt outputs/corpora/wp_train.jsonl \\
        --output-dir outputs/fluency-data
    accelerate launch training/train_fluency.py --model_name_or_path MINILM_FOLDER \\
        --dataset outputs/fluency-data --output_dir outputs/fluency-reader
    accelerate launch training/train_fluency.py --config training/configs/fluency-reader.json

The reader starts from ``--model_name_or_path``'s first ``--num_hidden_layers`` layers, with the
word pieces the training sentences use (``training/small_encoder.py``), unless the model is a
fluency reader already (a continued run: then it is trained as it is). Label 1 is human prose,
0 generated. Reports accuracy on the validation split and saves a plain
``BertForSequenceClassification`` with its tokenizer; ``story_quality.fluency`` reads it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import datasets
import numpy as np
import transformers
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    HfArgumentParser,
    Trainer,
    set_seed,
)

from story_quality.fluency.reader import ID2LABEL, is_fluency_reader, mark_as_reader
from story_quality.training import run_setup
from story_quality.training.small_encoder import small_classifier

logger = logging.getLogger(__name__)


@dataclass
class FluencyArguments(run_setup.PreparationArguments):
    model_name_or_path: str = field(
        metadata={"help": "Encoder to cut from (MiniLM), or a fluency reader to continue."}
    )
    dataset: str = field(
        metadata={"help": "Folder written by build_fluency_data.py (train and validation splits)."}
    )
    num_hidden_layers: int = field(default=4, metadata={"help": "Encoder layers kept from the start model."})
    min_piece_count: int = field(
        default=3, metadata={"help": "A word piece is kept if the training sentences use it this often."}
    )
    max_length: int = field(default=64, metadata={"help": "Word pieces kept per sentence."})


@dataclass
class FluencyTrainingArguments(run_setup.RunArguments):
    learning_rate: float = field(default=1e-4, metadata={"help": "AdamW peak learning rate."})
    per_device_train_batch_size: int = field(default=64, metadata={"help": "Sentences per step per device."})
    per_device_eval_batch_size: int = field(
        default=256, metadata={"help": "Evaluation batch size per device."}
    )
    num_train_epochs: float = field(default=1.0, metadata={"help": "Passes over the training sentences."})


def accuracy(prediction: transformers.EvalPrediction) -> dict[str, float]:
    predicted = np.argmax(prediction.predictions, axis=-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean())}


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = HfArgumentParser((FluencyArguments, FluencyTrainingArguments), description=__doc__)
    fluency_args, args = run_setup.parse_arguments(parser, argv)
    run_setup.check_local_paths((fluency_args,))
    run_setup.configure_logging(args, logger)
    push, repo_id = run_setup.push_target(args, logger)
    checkpoint = run_setup.resume_checkpoint(args)
    set_seed(args.seed)

    data = datasets.load_from_disk(fluency_args.dataset)
    if fluency_args.max_train_samples is not None:
        data["train"] = data["train"].select(range(min(fluency_args.max_train_samples, len(data["train"]))))
    with run_setup.quiet_load_report(logger, fluency_args.model_name_or_path):
        if is_fluency_reader(fluency_args.model_name_or_path):
            model = AutoModelForSequenceClassification.from_pretrained(fluency_args.model_name_or_path)
            tokenizer = AutoTokenizer.from_pretrained(fluency_args.model_name_or_path)
        else:
            model, tokenizer = small_classifier(
                fluency_args.model_name_or_path,
                data["train"]["text"],
                fluency_args.num_hidden_layers,
                fluency_args.min_piece_count,
                ID2LABEL,
                fluency_args.max_length,
            )
    mark_as_reader(model.config, fluency_args.max_length)
    with args.main_process_first(desc="tokenising"):
        features = data.map(
            lambda batch: tokenizer(batch["text"], truncation=True, max_length=fluency_args.max_length),
            batched=True,
            remove_columns=[c for c in data["train"].column_names if c != "label"],
            num_proc=fluency_args.preprocessing_num_workers,
            desc="Tokenising",
        )
    trainer = Trainer(
        model=model,
        args=args,
        data_collator=DataCollatorWithPadding(tokenizer),
        train_dataset=features["train"],
        eval_dataset=features["validation"],
        processing_class=tokenizer,
        compute_metrics=accuracy,
    )
    results = run_setup.train_and_evaluate(trainer, checkpoint)
    trainer.save_model(args.output_dir)
    if push and trainer.is_world_process_zero():
        run_setup.push_run(args, repo_id, "Fluency reader, trained with train_fluency.py", logger)
    return results


if __name__ == "__main__":
    sys.exit(run_setup.run_script(main))
