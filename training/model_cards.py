"""Model cards of the published checkpoints, rendered from ``hub_cards/`` at the end of a run.

A template holds the prose (intended use, how to score, limitations, citation); everything
a run measured or chose (results, hyper-parameters, data sizes, base model) comes in as
arguments, so no figure is typed by hand. Results go into the card's metadata as a
``model-index`` (through ``ModelCardData(eval_results=...)``) and the Markdown table is
rendered from the very same objects, so the two cannot disagree.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData, try_to_load_from_cache

HUB_CARDS_DIR = pathlib.Path(__file__).resolve().parents[1] / "hub_cards"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclasses.dataclass(frozen=True)
class CardTemplate:
    """The fixed metadata of one kind of published checkpoint, and its template file."""

    file: str
    license: str
    language: tuple[str, ...]
    tags: tuple[str, ...]
    pipeline_tag: str = "text-classification"
    library_name: str = "transformers"

    @property
    def path(self) -> pathlib.Path:
        return HUB_CARDS_DIR / self.file


CARD_TEMPLATES: dict[str, CardTemplate] = {
    "union-roc": CardTemplate(
        "union-roc.md", "apache-2.0", ("en",), ("union", "story-evaluation", "coherence", "rocstories")
    ),
    "union-wp": CardTemplate(
        "union-wp.md", "apache-2.0", ("en",), ("union", "story-evaluation", "coherence", "writingprompts")
    ),
    "union-mpnet-teacher": CardTemplate(
        "union-mpnet-teacher.md",
        "apache-2.0",
        ("en",),
        ("union", "story-evaluation", "coherence", "rocstories", "distillation-teacher"),
    ),
    "gruen-cola": CardTemplate(
        "gruen-cola.md",
        "apache-2.0",
        ("en",),
        ("gruen", "cola", "grammaticality", "linguistic-acceptability"),
    ),
}


def hub_id_or_none(name: str | None) -> str | None:
    """``name`` when it can only be a Hub id (not an existing local path), else None.

    Card metadata may only name Hub repositories (``base_model``, ``datasets``); a local
    folder is described in the prose instead.

    >>> hub_id_or_none("google-bert/bert-base-uncased")
    'google-bert/bert-base-uncased'
    >>> hub_id_or_none("/tmp") is None
    True
    """
    if not name or os.path.exists(name) or not _HUB_ID.match(name):
        return None
    return name


def base_model_names(name_or_path: str) -> tuple[str | None, str]:
    """The base model as the card's ``base_model`` metadata (a Hub id, or None) and as its prose names it.

    A Hub id is named as it is. A local folder is never named by its path: it is named by the Hub id
    it came from where it records one (its own card's ``base_model``, or its config's
    ``_name_or_path`` when that is a Hub id), else as "a local checkpoint".

    >>> base_model_names("google-bert/bert-base-uncased")
    ('google-bert/bert-base-uncased', 'google-bert/bert-base-uncased')
    >>> base_model_names("/no/such/folder")
    (None, 'a local checkpoint')
    """
    hub_id = hub_id_or_none(name_or_path)
    if hub_id:
        return hub_id, hub_id
    origin = recorded_origin(pathlib.Path(name_or_path))
    if origin:
        return origin, f"{origin} (from a local copy)"
    return None, "a local checkpoint"


SENTENCE_TRANSFORMERS_ORG = "sentence-transformers"


def sentence_transformers_name(folder: pathlib.Path) -> str | None:
    """The Hub id of a sentence-transformers model folder (it has ``modules.json``), read off its
    card's title (``# all-MiniLM-L6-v2``, outside code blocks), or None."""
    if not (folder / "modules.json").is_file() or not (folder / "README.md").is_file():
        return None
    in_code = False
    for line in (folder / "README.md").read_text(encoding="utf-8", errors="replace").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("# "):
            return f"{SENTENCE_TRANSFORMERS_ORG}/{line[2:].strip()}"
    return None


def recorded_origin(folder: pathlib.Path) -> str | None:
    """The Hub id a local model folder records as its origin, or None: its card's ``base_model``, a
    sentence-transformers folder's own name, else its config's ``_name_or_path`` (which names the
    model its weights were fine-tuned from when the folder was saved by sentence-transformers)."""
    candidates: list[Any] = []
    if (folder / "README.md").is_file():
        try:
            base = ModelCard.load(folder / "README.md").data.base_model
        except Exception:  # a card that does not parse records nothing
            base = None
        candidates += base if isinstance(base, list) else [base]
    candidates.append(sentence_transformers_name(folder))
    if (folder / "config.json").is_file():
        try:
            candidates.append(
                json.loads((folder / "config.json").read_text(encoding="utf-8")).get("_name_or_path")
            )
        except (ValueError, AttributeError):
            pass
    for candidate in candidates:
        if isinstance(candidate, str) and not os.path.isabs(candidate) and hub_id_or_none(candidate):
            return candidate
    return None


def base_model_licence(name_or_path: str) -> str | None:
    """The licence the base model's own card declares (its ``license`` metadata), or None.

    A local folder's card is its ``README.md``; a Hub id's is read from the local Hub cache only
    (a run that downloaded the model has it), so this never touches the network.

    >>> base_model_licence("/no/such/folder") is None
    True
    """
    card_path: str | os.PathLike | None = None
    if os.path.isdir(name_or_path):
        card_path = pathlib.Path(name_or_path) / "README.md"
    elif hub_id_or_none(name_or_path):
        cached = try_to_load_from_cache(name_or_path, "README.md")
        card_path = cached if isinstance(cached, str) else None
    if card_path is None or not os.path.isfile(card_path):
        return None
    try:
        licence = ModelCard.load(card_path).data.license
    except Exception:  # a card that does not parse declares nothing
        return None
    return licence if isinstance(licence, str) and licence.strip() else None


def licence_text(base_licence: str | None, default: str) -> str:
    """How the card's licence section words the base model's licence.

    >>> licence_text("mit", "apache-2.0")
    'mit, the licence its card declares'
    >>> licence_text(None, "apache-2.0")
    'its card declares no licence that could be read: check it before reusing this checkpoint'
    """
    if base_licence:
        return f"{base_licence}, the licence its card declares"
    return "its card declares no licence that could be read: check it before reusing this checkpoint"


def corpus_texts(summary: Mapping[str, Any] | None, copies: int = 1) -> dict[str, str]:
    """How the card words the training pairs: corrupted copies per story and the corpora, from the build
    summary of ``build_union_data.py`` (None: pairs read from a file, ``copies`` counted in the rows,
    from its one ``--dataset``).

    >>> corpus_texts({"copies": 2, "sources": ["data/roc_train.txt", "data/wp_train.jsonl"]})
    {'copies_text': '2 corrupted copies (each made with its own seed)', 'corpora_text': '2 corpora (roc_train.txt, wp_train.jsonl)'}
    """
    summary = summary or {}
    copies = int(summary.get("copies", copies))
    sources = [os.path.basename(str(s).rstrip("/\\")) or str(s) for s in summary.get("sources", [])]
    return {
        "copies_text": "one corrupted copy"
        if copies == 1
        else f"{copies} corrupted copies (each made with its own seed)",
        "corpora_text": f"{len(sources)} corpora ({', '.join(sources)})"
        if len(sources) > 1
        else "one corpus",
    }


def render_model_card(
    template: str,
    *,
    model_name: str,
    base_model: str | None,
    datasets: Sequence[str] = (),
    eval_results: Sequence[EvalResult] = (),
    base_licence: str | None = None,
    **variables: Any,
) -> ModelCard:
    """Render one of :data:`CARD_TEMPLATES` with a run's metadata, results and facts.

    ``base_licence`` is the licence the base model's card declares (:func:`base_model_licence`):
    the checkpoint's metadata carries it (else the template's default) and the prose names it.
    ``variables`` reach the Jinja template as they are; ``results`` (the eval results),
    ``licence_text`` and ``card_data`` (the YAML header) are always available to it.
    """
    if template not in CARD_TEMPLATES:
        raise ValueError(f"Unknown card template {template!r}; known: {sorted(CARD_TEMPLATES)}.")
    spec = CARD_TEMPLATES[template]
    data = ModelCardData(
        model_name=model_name,
        base_model=base_model,
        datasets=list(datasets) or None,
        eval_results=list(eval_results) or None,
        license=base_licence or spec.license,
        language=list(spec.language),
        library_name=spec.library_name,
        pipeline_tag=spec.pipeline_tag,
        tags=list(spec.tags),
        metrics=sorted({r.metric_type for r in eval_results}) or None,
    )
    return ModelCard.from_template(
        data,
        template_path=str(spec.path),
        model_name=model_name,
        results=list(eval_results),
        licence_text=licence_text(base_licence, spec.license),
        **variables,
    )


def write_model_card(card: ModelCard, directory: str | os.PathLike) -> pathlib.Path:
    """Save as ``README.md``, the file the Hub shows."""
    path = pathlib.Path(directory) / "README.md"
    card.save(path)
    return path


def format_value(value: Any) -> str:
    """A table cell: floats with 6 significant digits, enums by value, everything else as text.

    >>> format_value(0.01), format_value(5e-05), format_value(3)
    ('0.01', '5e-05', '3')
    """
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(getattr(value, "value", value))


def table_rows(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name, formatted value)`` pairs for a two-column Markdown table, in the mapping's order."""
    return [(name, format_value(value)) for name, value in values.items()]


def recipe_rows(trainer: Any, **extra: Any) -> list[tuple[str, str]]:
    """The card's recipe table: the hyper-parameters a trained ``Trainer`` used, then ``extra``."""
    args, steps, world_size = trainer.args, trainer.state.global_step, trainer.args.world_size
    precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    recipe = {
        "optimizer": f"{format_value(args.optim)} (betas {args.adam_beta1}, {args.adam_beta2}, eps {args.adam_epsilon})",
        "learning rate": args.learning_rate,
        "schedule": f"{format_value(args.lr_scheduler_type)}, warm-up "
        + (
            f"{args.warmup_steps:.0%} of the steps"
            if 0 < args.warmup_steps < 1
            else f"{int(args.warmup_steps)} steps"
        ),
        "weight decay": args.weight_decay,
        "gradient-norm clip": args.max_grad_norm,
        "batch size (per device x devices x accumulation)": (
            f"{args.per_device_train_batch_size} x {world_size} x {args.gradient_accumulation_steps}"
        ),
        "optimisation steps": steps,
        "epochs": args.num_train_epochs if args.max_steps <= 0 else "until max_steps",
        "seed": args.seed,
        "precision": precision,
    }
    recipe.update(extra)
    return table_rows(recipe)
