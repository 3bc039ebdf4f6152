"""The gruen metric's options: the one place their names, types, ranges, defaults and help are written.

``compute``, :class:`story_quality.gruen.scorer.GruenScorer`, ``story-quality score`` and the
metric card's option table all read :data:`GRUEN_OPTIONS` (see ``story_quality.options``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen.checkpoints import (
    COLA_CHECKPOINT,
    COLA_REVISION,
    LM_CHECKPOINT,
    SOP_CHECKPOINT,
    default_revision,
)
from story_quality.options import DEVICE, PRECISION, Option, OptionSpec

DEFAULT_BATCH_SIZE = 32
# How the masked LM's fluency term is computed: the release's unmasked pass, or the paper's
# pseudo-log-likelihood (story_quality.gruen.grammaticality).
LM_SCORINGS = ("reference", "pll")

GRUEN_OPTIONS = OptionSpec(
    "gruen",
    (
        Option("lm_model", "model", LM_CHECKPOINT, "the masked LM"),
        Option(
            "cola_model",
            "model",
            COLA_CHECKPOINT,
            "the CoLA classifier (class 1 = acceptable); the default is bert-base-cased fine-tuned on CoLA "
            "(validation MCC 0.5731 by its card), as the release's own fine-tune was never published",
        ),
        Option("sop_model", "model", SOP_CHECKPOINT, "the ALBERT-style sentence-order model, with coherence"),
        Option(
            "lm_revision",
            "revision",
            None,
            "the masked LM's pinned Hub revision",
            default_text="the latest (main)",
        ),
        Option(
            "cola_revision",
            "revision",
            None,
            "the CoLA classifier's pinned Hub revision",
            default_text=f"{COLA_REVISION[:12]}... for the default CoLA model, else the latest (main)",
        ),
        Option(
            "sop_revision",
            "revision",
            None,
            "the sentence-order model's pinned Hub revision",
            default_text="the latest (main)",
        ),
        Option(
            "coherence",
            "flag",
            False,
            "add the structure and coherence term (minus the sentence-order loss)",
        ),
        Option(
            "lm_scoring",
            "choice",
            "reference",
            "reference: the release's unmasked LM term (matches published GRUEN); pll: the paper's "
            "pseudo-log-likelihood, every word piece masked in turn",
            choices=LM_SCORINGS,
        ),
        Option(
            "batch_size",
            "count",
            DEFAULT_BATCH_SIZE,
            "sequences per forward pass (masked copies with pll); scores do not depend on it",
        ),
        DEVICE,
        PRECISION,
    ),
)

# The options that name a model (a Hub id or folder, and its revision): the scorer's, not a call's.
MODEL_OPTIONS = tuple(option.name for option in GRUEN_OPTIONS.options if option.kind in ("model", "revision"))


class GruenModels(NamedTuple):
    """GRUEN's three models as one value, each a checkpoint reference (name and revision)."""

    lm: CheckpointReference
    cola: CheckpointReference
    sop: CheckpointReference

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> GruenModels:
        """From the options ``ROLE_model`` and ``ROLE_revision`` (:data:`MODEL_OPTIONS`), each checked,
        those not given at their defaults; the default CoLA model at its pinned revision."""
        given = {name: GRUEN_OPTIONS[name].check(options.get(name, GRUEN_OPTIONS[name].default))
                 for name in MODEL_OPTIONS}  # fmt: skip
        return cls(
            CheckpointReference.parse(given["lm_model"], given["lm_revision"]),
            CheckpointReference.parse(
                given["cola_model"], default_revision(given["cola_model"], given["cola_revision"])
            ),
            CheckpointReference.parse(given["sop_model"], given["sop_revision"]),
        )
