"""The human scale of UNION scores: where a story's score falls among human stories.

A raw score ranks stories but does not say how good a story reads: the shipped default gives
coherent human ROC stories 0.73 on average, and no score means "as good as a person". For each
shipped default a small table (package data in ``human_scale_tables/``) holds the scores that
checkpoint gives the human stories the development suite holds back from training, per domain
(``roc``: ROCStories; ``wp``: WritingPrompts, prompt and about 200 words). With
``percentiles="human-roc"`` (or ``"human-wp"``) the metric returns, beside each raw score, its
percentile among those human stories: 30 means 30 % of the held-back human stories of that domain
score lower (ties count half).

It is a percentile among one set of human stories of one domain, read by one checkpoint; not a
calibrated probability, not a quality grade, and not comparable across checkpoints.

Each table records the checkpoint it was made with (its signature label and the full sha256 of
its weights) and how it was read (window, long stories); its own sha256 is pinned in
:data:`TABLES` and checked at load, and the table's sha256 joins the signature of every result
with percentiles. In a clone, ``python training/shipped_assets/human_scale_table.py CORPORA --checkpoint default``
rebuilds a table from the held-back stories ``python -m benchmarks.dev_split --output-dir CORPORA``
writes; a new shipped default needs that command and the new pin below.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from story_quality.checkpoints.files import sha256_of, weights_sha256
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.signature import Signature, SignatureError

# percentiles= -> the domain of the human stories
HUMAN_SCALES = {"human-roc": "roc", "human-wp": "wp"}
# A domain as a row of ``compare`` names it.
HUMAN_DOMAINS = {"roc": "human ROC stories", "wp": "human WP stories"}
TABLE_FOLDER = pathlib.Path(__file__).with_name("human_scale_tables")


@dataclass(frozen=True)
class TableEntry:
    """Where a checkpoint's table lies and the sha256 its file must have."""

    path: pathlib.Path
    sha256: str


# The checkpoint's name as its signature label writes it (before the "@") -> its table. A table
# records the command that made it as it was then (the shipped one names the builder's earlier
# module, benchmarks.human_reference_scores): its bytes are pinned, so it is never rewritten for a
# rename; training/shipped_assets/human_scale_table.py builds the next one.
TABLES: dict[str, TableEntry] = {
    "default": TableEntry(
        TABLE_FOLDER / "default.json", "6b75f43d513ee489350800d3543d78eb4a29bc743f95b1fc454f91c324fd316d"
    ),
}


class HumanScaleError(ValueError):
    """No usable human scale table: the message names the checkpoint, the table and what to do."""


@dataclass(frozen=True)
class HumanScale:
    """One checkpoint's scores of held-back human stories, per domain, sorted."""

    checkpoint: str
    weights_sha256: str | None
    signature: str
    sha256: str
    path: pathlib.Path
    domains: dict[str, np.ndarray]

    def percentiles(self, scores: Sequence[float], domain: str) -> list[float]:
        """Each score's percentile (0-100) among the domain's human stories: the share below, ties half."""
        return percentile_ranks(scores, self.domains[domain]).tolist()

    def signature_part(self, scale: str) -> str:
        return f"{scale}:sha256:{self.sha256[:12]}"


# Two scores this close are one score: a story's score moves by up to 1e-5 with its batch-mates
# (padding, summation order), and a table holds scores rounded to 6 decimals. Without it a
# held-back story scored beside others would fall just above or just below its own table entry,
# and its percentile would move with the batch it is scored in.
TIE_TOLERANCE = 1e-5


def percentile_ranks(scores: Sequence[float] | np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``100 * (#reference < s + #reference == s / 2) / len(reference)`` for each score ``s``, where
    ``==`` means within :data:`TIE_TOLERANCE`.

    >>> percentile_ranks([0.1, 0.5, 0.9], np.array([0.2, 0.5, 0.5, 0.8])).tolist()
    [0.0, 50.0, 100.0]
    >>> percentile_ranks([0.5 - 3e-7, 0.5 + 3e-7], np.array([0.2, 0.5, 0.8])).tolist()
    [50.0, 50.0]
    """
    ordered = np.sort(np.asarray(reference, dtype=float))
    values = np.asarray(scores, dtype=float)
    below = np.searchsorted(ordered, values - TIE_TOLERANCE, side="left")
    at_most = np.searchsorted(ordered, values + TIE_TOLERANCE, side="right")
    return 100.0 * (below + at_most) / (2 * len(ordered))


def checkpoint_label(signature: str | Signature) -> str:
    """The ``checkpoint:`` part of a union signature (``default@sha256:8332b595696f``)."""
    try:
        return Signature.parse(signature)["checkpoint"]
    except SignatureError:
        raise HumanScaleError(
            f"the signature {signature!s} names no checkpoint; it is not a union signature"
        ) from None


def raw_reading(signature: str | Signature) -> tuple[str, ...]:
    """What changes a raw score (:meth:`Signature.reading`), the human-scale part left out: a table's
    stories and a call's must agree on it.

    >>> raw_reading("union|v1|checkpoint:default@sha256:ab|window:256|fp32|human-roc:sha256:cd")
    ('union', 'checkpoint:default@sha256:ab', 'window:256')
    """
    return Signature.parse(signature).without(*HUMAN_SCALES).scoring_parts()


@functools.lru_cache(maxsize=8)
def _read_table(path: str, size: int, mtime_ns: int, expected_sha256: str) -> HumanScale:
    location = pathlib.Path(path)
    found = sha256_of(location)
    if found != expected_sha256:
        raise HumanScaleError(
            f"{location} is damaged or was changed: its sha256 is {found}, the pinned one {expected_sha256}. "
            "Reinstall the project, or rebuild the table (python training/shipped_assets/human_scale_table.py) "
            "and pin its new sha256 in story_quality/union/human_scale.py."
        )
    table: dict[str, Any] = json.loads(location.read_text(encoding="utf-8"))
    return HumanScale(
        checkpoint=table["checkpoint"],
        weights_sha256=table.get("weights_sha256"),
        signature=table["signature"],
        sha256=found,
        path=location,
        domains={name: np.sort(np.asarray(d["scores"], dtype=float)) for name, d in table["domains"].items()},
    )


def load_table(path: str | os.PathLike, expected_sha256: str) -> HumanScale:
    """A table file, after checking it against its pinned sha256 (:class:`HumanScaleError` if not)."""
    location = pathlib.Path(path)
    if not location.is_file():
        raise HumanScaleError(f"the human scale table {location} is missing; reinstall the project")
    stat = location.stat()
    return _read_table(str(location), stat.st_size, stat.st_mtime_ns, expected_sha256)


def human_scale_for(label: str) -> HumanScale:
    """The table of the checkpoint whose signature label is ``label``, or an error naming the tables there are."""
    name = CheckpointReference.name_in_label(label)
    entry = TABLES.get(name)
    if entry is None:
        raise HumanScaleError(
            f"no human scale table for the UNION checkpoint {name!r} ({label}): tables exist for "
            f"{', '.join(repr(known) for known in TABLES)}. Score with one of those checkpoints, or without percentiles."
        )
    table = load_table(entry.path, entry.sha256)
    if table.checkpoint != label:
        raise HumanScaleError(
            f"the human scale table of {name!r} ({entry.path.name}) was made with {table.checkpoint}, "
            f"not with {label}: another checkpoint's human stories would give wrong percentiles."
        )
    return table


def held_back_rows(
    signature: Signature, column: str
) -> tuple[list[tuple[str, np.ndarray]], str | None, list[str]]:
    """What ``compare`` shows beside the systems of a file with ``signature`` when it compares
    ``column``: the held-back human stories' raw scores, one row per domain, when the checkpoint
    ships a table read as the file was; (rows, the table's sha256, notes on why none is shown).
    A table that is damaged is an error."""
    if signature.metric != "union" or column != "union":
        return [], None, []
    label = signature["checkpoint"]
    if CheckpointReference.name_in_label(label) not in TABLES:
        return [], None, [f"no human scale table for {label}; tables exist for {', '.join(TABLES)}"]
    try:
        table = human_scale_for(label)
    except HumanScaleError as error:
        if "was made with" not in str(error):
            raise
        return [], None, [f"no human scale rows: {error}"]
    if raw_reading(table.signature) != raw_reading(signature):
        return [], None, [f"no human scale rows: its stories were read as {table.signature}"]
    rows = [
        (f"{HUMAN_DOMAINS.get(name, name)} (held back)", scores) for name, scores in table.domains.items()
    ]
    return rows, table.sha256, []


def human_scale_for_call(scale: str, signature: Signature, checkpoint: CheckpointReference) -> HumanScale:
    """The table for a metric call with ``signature`` on ``checkpoint``, after checking it was made
    with the same weights and the same reading of the stories."""
    if scale not in HUMAN_SCALES:
        raise ValueError(
            f"percentiles must be one of {', '.join(map(repr, HUMAN_SCALES))} or None, got {scale!r}"
        )
    table = human_scale_for(signature["checkpoint"])
    if checkpoint.local and table.weights_sha256 != weights_sha256(checkpoint.source):
        raise HumanScaleError(
            f"the human scale table {table.path.name} was made with weights of sha256 "
            f"{table.weights_sha256}; the checkpoint in {checkpoint.source} has other weights."
        )
    if raw_reading(table.signature) != raw_reading(signature):
        differs = sorted(set(raw_reading(signature)) - set(raw_reading(table.signature)))
        raise HumanScaleError(
            f"percentiles={scale!r}: the human stories of {table.path.name} were read as {table.signature}; "
            f"this call reads them differently ({', '.join(differs)}). Drop max_length / long_stories "
            "to use the checkpoint's own reading, or drop percentiles."
        )
    return table


def write_table(
    path: str | os.PathLike,
    signature: str,
    weights: str | None,
    domains: dict[str, tuple[str, Sequence[float]]],
    command: str,
) -> str:
    """Write a table: the checkpoint's ``signature`` and full ``weights`` sha256, and for each domain
    name a description of its stories and their scores (in the stories' order); returns the file's
    sha256, the value to pin in :data:`TABLES`."""
    table = {
        "checkpoint": checkpoint_label(signature),
        "weights_sha256": weights,
        "signature": signature,
        "command": command,
        "domains": {
            name: {"stories": about, "n": len(scores), "scores": [round(float(s), 6) for s in scores]}
            for name, (about, scores) in domains.items()
        },
    }
    location = pathlib.Path(path)
    location.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return sha256_of(location)
