"""What every training script does first: read its arguments, find the checkpoint to resume, set up logging.

Shared by ``train_union.py`` and ``train_cola.py`` (entry scripts import modules, never each other).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pathlib
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import datasets
import transformers
from transformers import HfArgumentParser, Trainer, TrainingArguments
from transformers.trainer_utils import HubStrategy

from story_quality.checkpoints.files import PICKLE_WEIGHTS_FILE, WEIGHT_FILES
from story_quality.cli.errors import report
from story_quality.input_files import DATA_FILE_BUILDERS as DATA_FILE_BUILDERS  # the scripts' data-file table
from story_quality.process_group import leave_process_group, process_group_open
from story_quality.training.hub_push import (
    PushError,
    check_model_id,
    check_push_strategy,
    check_revision,
    push_checkpoint,
    push_plan,
    repository_for,
)
from story_quality.training.launches import cpu_flags, refuse_a_lone_launch
from story_quality.training.output_folders import (
    OutputFolderArguments,
    holds_a_run,
    refuse_foreign_run_folder,
)

logger = logging.getLogger(__name__)
CHECKPOINT_NAME = re.compile(r"checkpoint-\d+")


@dataclass(kw_only=True)
class PreparationArguments:
    """Data preparation options both scripts take (keyword-only: a subclass may add fields without defaults)."""

    max_train_samples: int | None = field(
        default=None, metadata={"help": "Keep only the first N training examples (quick runs)."}
    )
    preprocessing_num_workers: int | None = field(
        default=None,
        metadata={
            "help": "Processes that prepare the data (tokenisation; negative sampling in train_union.py)."
        },
    )


@dataclass
class RunArguments(OutputFolderArguments, TrainingArguments):
    """``TrainingArguments`` with the defaults both training scripts share; each sets its own batch sizes."""

    output_dir: str = field(metadata={"help": "Where the checkpoint, its tokenizer and card are written."})
    weight_decay: float = field(
        default=0.01,
        metadata={"help": "AdamW weight decay, not applied to biases and LayerNorm (UNION: 0.01)."},
    )
    warmup_steps: float = field(
        default=0.1,
        metadata={"help": "Linear warm-up: a step count, or a fraction of all steps if < 1 (UNION: 0.1)."},
    )
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: no, steps or epoch."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to save a resumable checkpoint."})
    logging_steps: float = field(default=50, metadata={"help": "Log the loss every N steps."})
    save_total_limit: int | None = field(default=2, metadata={"help": "Resumable checkpoints kept."})
    resume_from_checkpoint: str | None = field(
        default=None,
        metadata={"help": "A checkpoint folder to resume from, or 'last' for the newest one in output_dir."},
    )
    push_to_hub: bool = field(
        default=False,
        metadata={
            "help": "Upload the finished output folder (the model, its tokenizer, card and results) once, after "
            "training, to the Hub repository --hub_model_id names (default: YOUR_NAME/<output folder's "
            "name>), created if missing; the repository is printed before training, and a run that cannot "
            "tell who you are is refused then. Checkpoints stay local."
        },
    )
    hub_model_id: str | None = field(
        default=None,
        metadata={
            "help": "The repository --push_to_hub uploads to: NAME (in your namespace) or ORG/NAME; needs "
            "--push_to_hub."
        },
    )
    hub_strategy: HubStrategy | str = field(
        default="end",
        metadata={
            "help": "Only 'end' is accepted (or leave it out): --push_to_hub uploads once, after the run; "
            "no save or checkpoint is pushed on the way."
        },
    )
    hub_revision: str | None = field(
        default=None,
        metadata={
            "help": "The branch --push_to_hub commits to (created from main when missing; default: main)."
        },
    )


# What a training script refuses with (a bad flag, file or folder, a Hub that does not know the user):
# one line and exit status 2, as the package's commands do. Anything else is a bug and keeps its traceback.
REFUSALS = (ValueError, TypeError, OSError, PushError)


def refuse(error: BaseException | str) -> NoReturn:
    """Stop on a bad option as argparse does (exit status 2), with one line, ``SCRIPT: error: MESSAGE``:
    the Trainer's arguments make argparse's usage some 120 lines, which would bury the message."""
    raise SystemExit(report(pathlib.Path(sys.argv[0]).name, error))


def run_script(main: Callable[[], object]) -> int:
    """Run a training script's ``main`` as its ``__main__`` does: a refusal prints
    ``SCRIPT: error: MESSAGE`` (``story_quality.cli.errors.report``) and returns 2, no traceback; under
    torchrun every process closes the process group either way, so none aborts at exit."""
    try:
        main()
        return 0
    except REFUSALS as error:
        return report(pathlib.Path(sys.argv[0]).name, error)
    finally:
        if process_group_open():
            leave_process_group()


def train_and_evaluate(trainer: Trainer, checkpoint: str | None, evaluate: bool = True) -> dict[str, float]:
    """Train (resuming from ``checkpoint``), then evaluate; each stage's metrics logged and saved."""
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    results = dict(train_result.metrics)
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_metrics("train", train_result.metrics)
    trainer.save_state()
    if evaluate:
        eval_metrics = trainer.evaluate()
        trainer.log_metrics("eval", eval_metrics)
        trainer.save_metrics("eval", eval_metrics)
        results.update(eval_metrics)
    return results


def push_run(args: TrainingArguments, repo_id: str, message: str, script_logger: logging.Logger) -> None:
    """Upload the finished output folder; a failure ends the script with the error (the folder stays)."""
    try:
        url = push_checkpoint(
            args.output_dir,
            repo_id,
            token=args.hub_token,
            private=args.hub_private_repo,
            commit_message=message,
            revision=args.hub_revision,
        )
    except PushError as error:
        sys.exit(f"error: {error}")
    script_logger.info("Pushed to %s", url)


def push_target(args: TrainingArguments, script_logger: logging.Logger) -> tuple[bool, str]:
    """Whether the run pushes, and the repository it pushes to (or its card names): the user's namespace
    and the output folder's name unless ``--hub_model_id`` says otherwise, printed before any training.

    ``args.push_to_hub`` is turned off: the Trainer would create the repository before training; the
    scripts push once, at the end, with :func:`push_run`.
    """
    push, args.push_to_hub = args.push_to_hub, False
    repo_id = repository_for(args.hub_model_id, args.output_dir, args.hub_token, push)
    if push:
        script_logger.info(push_plan(repo_id, args.hub_revision))
    return push, repo_id


RECIPE_SUFFIXES = (".json", ".yaml", ".yml")


def _mapping_of_unique_keys(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, Any]:
    """A JSON object or YAML mapping as a dict, or the error naming a key given twice (which
    ``json`` and ``yaml`` would otherwise let the last one win)."""
    mapping: dict[Any, Any] = {}
    for key, value in pairs:
        if key in mapping:
            raise ValueError(f"{key!r} given twice")
        mapping[key] = value
    return mapping


def _unique_key_yaml_loader() -> type:
    """``yaml.SafeLoader`` refusing a mapping with a key given twice."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            self.flatten_mapping(node)
            pairs = [
                (self.construct_object(key, deep=deep), self.construct_object(value, deep=deep))
                for key, value in node.value
            ]
            return _mapping_of_unique_keys(pairs)

    return UniqueKeyLoader


def config_flags(path: str) -> list[str]:
    """A recipe file (a JSON or YAML object of argument names and values, as ``HfArgumentParser``'s
    ``parse_json_file`` / ``parse_yaml_file`` read) as the flags it stands for.

    >>> import json, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     json.dump({"learning_rate": 1e-4, "report_to": ["none"], "seed": 42}, f)
    >>> config_flags(f.name)
    ['--learning_rate', '0.0001', '--report_to', 'none', '--seed', '42']
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            if path.endswith(".json"):
                options = json.load(handle, object_pairs_hook=_mapping_of_unique_keys)
            else:
                options = yaml.load(handle, Loader=_unique_key_yaml_loader())  # a SafeLoader
    except (OSError, ValueError, yaml.YAMLError) as error:
        raise ValueError(f"recipe file {path}: {' '.join(str(error).split())}") from None
    if not isinstance(options, dict):
        kind = "JSON" if path.endswith(".json") else "YAML"
        raise ValueError(
            f"recipe file {path}: expected a {kind} object (mapping) of argument names and values"
        )
    flags: list[str] = []
    for name, value in options.items():
        values = value if isinstance(value, list) else [value]
        flags += [f"--{name}", *(json.dumps(v) if isinstance(v, bool) else str(v) for v in values)]
    return flags


def parse_arguments(parser: HfArgumentParser, argv: Sequence[str] | None) -> tuple[Any, ...]:
    """Command-line flags, or a ``.json`` / ``.yaml`` recipe file first and flags that override it after.

    ``train_union.py training/configs/union-cpu-phase1.json --output_dir run --seed 43`` reads the
    recipe and changes two of its values (a flag given later wins).

    ``accelerate launch --cpu`` on a machine with a GPU puts the model on the CPU, but
    ``TrainingArguments`` still picks the GPU for the batches unless ``use_cpu`` is set (a crash
    in the first embedding lookup); the launcher's choice is passed on as ``use_cpu``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].endswith(RECIPE_SUFFIXES):
        argv = config_flags(argv[0]) + argv[1:]
    refuse_a_lone_launch()  # one line, also where accelerate's launcher would add a traceback
    parsed = parser.parse_args_into_dataclasses(args=argv + cpu_flags(argv))
    try:
        check_push_strategy(parsed[-1].hub_strategy)  # "end" unless the flag says otherwise
        check_revision(parsed[-1].push_to_hub, parsed[-1].hub_revision)
        check_model_id(parsed[-1].push_to_hub, parsed[-1].hub_model_id)
    except ValueError as error:
        refuse(error)
    return parsed


# Arguments that take a Hub id or a local path: a local-looking one that does not exist is a typo.
HUB_OR_LOCAL_FIELDS = ("model_name_or_path", "dataset", "validation_dataset", "dataset_name")


def check_local_paths(parsed: Sequence[Any]) -> None:
    """Refuse a ``--model_name_or_path`` / ``--dataset`` / ``--validation_dataset`` / ``--dataset_name`` that reads as a local
    path but does not exist, naming it as a missing file or folder (not, as the Hub client would, as a
    malformed repository id)."""
    for arguments in parsed:
        for name in HUB_OR_LOCAL_FIELDS:
            value = getattr(arguments, name, None)
            if isinstance(value, str) and value and not os.path.exists(value) and looks_local(value):
                raise ValueError(f"--{name} {value}: {missing_path(value)}")


def looks_local(value: str) -> bool:
    """Whether ``value`` can only be a local path: it starts with ``./``, ``../``, ``/`` or ``~``, has more
    parts than a Hub id (``NAMESPACE/NAME``), or its first part is a folder here.

    >>> [looks_local(v) for v in ("./bert", "runs/a/b", "google-bert/bert-base-uncased", "roc")]
    [True, True, False, False]
    """
    path = pathlib.PurePath(value)
    return (
        value.startswith(("./", "../", "/", "~", ".\\", "..\\"))
        or value in (".", "..")
        or len(path.parts) > 2
        or (len(path.parts) == 2 and os.path.isdir(path.parts[0]))
    )


def missing_path(value: str) -> str:
    """What is missing of the local path ``value``: its first part that does not exist.

    >>> missing_path("/no-such-root/model")
    "no such file or folder ('/no-such-root' does not exist)."
    """
    path = pathlib.Path(value).expanduser()
    first_missing = path
    while not first_missing.parent.exists():
        first_missing = first_missing.parent
    return f"no such file or folder ({str(first_missing)!r} does not exist)."


@contextlib.contextmanager
def quiet_load_report(script_logger: logging.Logger, source: str) -> Iterator[None]:
    """Load an encoder without transformers' load report (a fresh head's missing keys, and a MiniLM
    sentence encoder's untied MLM head reported as "seem corrupted", are what fine-tuning expects);
    one line says so instead. At ``--log_level debug`` the report is shown as it is."""
    level = transformers.utils.logging.get_verbosity()
    if level <= logging.DEBUG:
        yield
        return
    transformers.utils.logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers.utils.logging.set_verbosity(level)
    script_logger.info(
        "Loaded %s; heads it lacks start fresh, as fine-tuning expects (--log_level debug shows the report).",
        source,
    )


def trainer_checkpoints(run_dir: str | os.PathLike) -> list[tuple[int, pathlib.Path]]:
    """The ``checkpoint-N`` folders of ``run_dir`` with their steps, oldest first (856 before 1712)."""
    root = pathlib.Path(run_dir)
    if not root.is_dir():
        return []
    return sorted((int(p.name.split("-")[1]), p) for p in root.iterdir() if CHECKPOINT_NAME.fullmatch(p.name))


def resume_checkpoint(args: TrainingArguments) -> str | None:
    """The checkpoint to resume from: the one named, or the newest in ``output_dir`` for 'last'.

    A fresh run (nothing to resume) refuses an ``output_dir`` that holds an earlier run unless
    ``--overwrite_output_dir`` says so: hours of training are not lost to a reused folder name.
    """
    wanted = args.resume_from_checkpoint
    refuse_foreign_run_folder(args.output_dir)
    if not wanted:
        if holds_a_run(args.output_dir) and not getattr(args, "overwrite_output_dir", False):
            raise FileExistsError(
                f"{args.output_dir} already holds a trained model or checkpoints. Pass "
                "--overwrite_output_dir true to train over it, --resume_from_checkpoint last to continue "
                "it, or another --output_dir."
            )
        return None
    if wanted.lower() in ("last", "latest", "true"):
        for _, folder in reversed(
            trainer_checkpoints(args.output_dir)
        ):  # newest first; one cut short by a kill while saving is passed over
            problem = checkpoint_problem(folder)
            if problem is None:
                return str(folder)
            logger.warning("Not resuming from %s: %s.", folder, problem)
        raise ValueError(
            f"--resume_from_checkpoint {wanted}: no complete checkpoint-* folder in {args.output_dir!r}."
        )
    problem = checkpoint_problem(pathlib.Path(wanted)) if os.path.isdir(wanted) else "it is not a folder"
    if problem:
        raise ValueError(f"--resume_from_checkpoint {wanted}: {problem}.")
    return wanted


def checkpoint_problem(folder: pathlib.Path) -> str | None:
    """Why a Trainer checkpoint folder cannot be resumed from, or None.

    The Trainer writes ``trainer_state.json`` last, so a folder whose state file is missing or
    not whole JSON was cut short (a run killed while saving it).
    """
    try:
        json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "trainer_state.json is missing"
    except ValueError:
        return "trainer_state.json is incomplete (the run was stopped while saving it)"
    if not any((folder / name).exists() for name in (*WEIGHT_FILES, PICKLE_WEIGHTS_FILE)):
        return "its model weights are missing"
    return None


def configure_logging(args: TrainingArguments, script_logger: logging.Logger) -> None:
    """Libraries at the Trainer's per-process level; the script's own progress at INFO on the main process."""
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO, stream=sys.stdout
    )
    level = args.get_process_log_level()
    script_logger.setLevel(logging.INFO if args.should_log else level)
    datasets.utils.logging.set_verbosity(level)
    transformers.utils.logging.set_verbosity(level)
