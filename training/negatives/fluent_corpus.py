"""A built corpus with fluent negatives: candidates drawn, filtered adversarially, swapped in.

The steps of ``training/fluent_negatives.py`` (:mod:`.fluent_candidates` holds the candidates themselves):
the corpus's human stories as sentences, their embeddings (cached), the neighbour tables, the
candidates, their P(human-written) under the filtering checkpoint (beside the human stories' own,
so the summary says how often the checkpoint already prefers the human story), the ``keep`` most
human per story, and a share of the corrupted copies replaced by them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from datasets.fingerprint import Hasher

from story_quality.training.distillation import recorded_normalization, row_scorer, teacher_probabilities
from story_quality.training.negatives.copy_replacement import replace_negatives
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.negatives.fluent_candidates import (
    FLUENT,
    FluentOptions,
    Neighbours,
    build_candidates,
    human_stories,
    most_human,
)
from story_quality.training.negatives.lm_continuations import load_corpus
from story_quality.training.negatives.sentence_embeddings import cached_embeddings
from story_quality.training.output_folders import (
    check_output_folder,
    probe_writable,
    saved_dataset,
    written_whole,
)

SUMMARY = "fluent_negatives_summary.json"
# The output: a saved dataset and its summary, never another tool's folder.
FLUENT_CORPUS = saved_dataset("fluent_negatives", "a corpus with fluent negatives", SUMMARY)


@dataclasses.dataclass(frozen=True)
class FilterSettings:
    """The checkpoint that filters the candidates and how it reads them (as training reads rows)."""

    checkpoint: str = "default"
    max_length: int = 256
    batch_size: int = 64
    device: str = "cpu"


def make_fluent_corpus(
    corpus_dir: pathlib.Path,
    output_dir: pathlib.Path,
    encoder: pathlib.Path,
    *,
    fraction: float,
    seed: int,
    options: FluentOptions | None = None,
    scoring: FilterSettings | None = None,
    cache_dir: pathlib.Path | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Check the output folder, build the corpus with fluent negatives and write it with its summary."""
    options, scoring = options or FluentOptions(), scoring or FilterSettings()
    if not 0 <= fraction <= 1:
        raise ValueError(f"--fraction must be in [0, 1], got {fraction}.")
    check_output_folder(output_dir, FLUENT_CORPUS, overwrite, inputs=[corpus_dir, encoder])
    probe_writable(output_dir)
    started = time.monotonic()
    corpus = load_corpus(corpus_dir, "corpus")
    scorer = row_scorer(
        scoring.checkpoint, recorded_normalization(corpus), scoring.max_length, str(corpus_dir), "--scorer"
    )
    table = human_stories(corpus)
    embeddings, embedding_record = cached_embeddings(encoder, table.flat, cache_dir)
    near = Neighbours.of(table, embeddings, options.neighbours)
    fingerprint = Hasher.hash(
        [corpus._fingerprint, seed, options, embedding_record["sha256"], _code_sha256()]
    )
    candidates = build_candidates(table, near, seed, options, fingerprint)
    flat = [text for texts in candidates["candidates"] for text in texts]
    humans = [" ".join(story) for story in table.sentences]
    scores = teacher_probabilities(
        scorer, flat + humans, scoring.max_length, scoring.batch_size, torch.device(scoring.device)
    )
    kept, kept_kinds = most_human(candidates, scores[: len(flat)], options.keep)
    swapped, summary = replace_negatives(corpus, kept, fraction, seed, label=FLUENT)
    summary.update(
        {
            "options": dataclasses.asdict(options),
            "filter": dataclasses.asdict(scoring),
            "stories": len(table.story_index),
            "embeddings": embedding_record,
            "candidates": candidate_report(candidates, scores[: len(flat)], scores[len(flat) :], kept_kinds),
            "corpus_sha256": corpus_sha256(corpus),
            "rows_sha256": corpus_sha256(swapped),
            "wall_seconds": round(time.monotonic() - started, 1),
        }
    )
    with written_whole(output_dir) as scratch:
        swapped.save_to_disk(str(scratch))
        (scratch / SUMMARY).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def candidate_report(
    candidates: Any, scores: Sequence[float], human_scores: Sequence[float], kept_kinds: dict[int, list[str]]
) -> dict[str, dict[str, float]]:
    """Per kind: candidates drawn, kept, their mean P(human), and how often the filtering checkpoint
    rates the human story above the candidate (the checkpoint's accuracy on that kind before training)."""
    by_kind: dict[str, list[tuple[float, float]]] = {}
    at = 0
    for position, kinds in enumerate(candidates["kinds"]):
        for kind in kinds:
            by_kind.setdefault(kind, []).append((float(scores[at]), float(human_scores[position])))
            at += 1
    kept = [kind for kinds in kept_kinds.values() for kind in kinds]
    report = {}
    for kind, pairs in by_kind.items():
        mine = np.asarray(pairs)
        report[kind] = {
            "drawn": len(pairs),
            "kept": kept.count(kind),
            "mean_p_human": round(float(mine[:, 0].mean()), 4),
            "human_preferred": round(float((mine[:, 1] > mine[:, 0]).mean()), 4),
        }
    report["human stories"] = {"mean_p_human": round(float(np.mean(human_scores)), 4)}
    return report


def _code_sha256() -> str:
    """The candidates' code, so a changed rule never reuses cached candidates."""
    return hashlib.sha256(pathlib.Path(inspect.getfile(FluentOptions)).read_bytes()).hexdigest()
