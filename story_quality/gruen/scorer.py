"""GRUEN scoring as one object: three models named once, ``score(texts)`` for every call.

    >>> scorer = GruenScorer(lm_model="google-bert/bert-base-cased")   # doctest: +SKIP
    >>> result = scorer.score(["The dog ran home. It was happy."], coherence=True)  # doctest: +SKIP
    >>> result.scores, result.grammaticality, result.signature           # doctest: +SKIP

The metric script (``metrics/gruen/gruen.py``) and ``story-quality score`` both score through
it: the checks of the texts and options (:data:`GRUEN_OPTIONS`), the sentence split, the device,
the warnings, the models (loaded on first use, kept in a :class:`ModelCache`) and the signature
live here, once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from story_quality.checkpoints.reference import hash_ahead
from story_quality.collection_pause import collector_paused
from story_quality.gruen.aspects import AspectScorer
from story_quality.gruen.checkpoints import COLA_CHECKPOINT, LM_CHECKPOINT, SOP_CHECKPOINT
from story_quality.gruen.loading import ModelCache
from story_quality.gruen.options import GRUEN_OPTIONS, MODEL_OPTIONS, GruenModels
from story_quality.gruen.sentences import text_to_sentences
from story_quality.precision import SIGNATURE_LABELS, check_precision
from story_quality.signature import Signature
from story_quality.text_checks import check_texts, has_word, unknown_shares, warn_unread_texts

if TYPE_CHECKING:
    from story_quality.checkpoints.reference import CheckpointReference


@dataclasses.dataclass(frozen=True)
class GruenResult:
    """One call's scores, per text in input order, their aspects and what made them."""

    scores: list[float]
    grammaticality: list[float]
    redundancy: list[float]
    focus: list[float]
    coherence: list[float | None]  # None for every text when coherence is off
    signature: str

    @property
    def mean(self) -> float:
        """The mean score (NaN when there are no texts)."""
        return statistics.fmean(self.scores) if self.scores else math.nan

    def as_dict(self) -> dict:
        """The metric's result: ``scores`` and ``gruen_score`` (the key style union shares), the
        aspects, and ``gruen`` / ``mean_gruen``, the names earlier versions returned."""
        return {
            "scores": self.scores,
            "gruen_score": self.mean,
            "gruen": self.scores,
            "grammaticality": self.grammaticality,
            "redundancy": self.redundancy,
            "focus": self.focus,
            "coherence": self.coherence,
            "mean_gruen": self.mean,
            "signature": self.signature,
        }


class GruenScorer:
    """GRUEN's masked LM, CoLA classifier and sentence-order model (Hub ids or folders, each with
    an optional pinned revision); each is loaded when a call first needs it and kept in ``models``."""

    def __init__(
        self,
        lm_model: str = LM_CHECKPOINT,
        cola_model: str = COLA_CHECKPOINT,
        sop_model: str = SOP_CHECKPOINT,
        lm_revision: str | None = None,
        cola_revision: str | None = None,
        sop_revision: str | None = None,
        models: ModelCache | None = None,
    ) -> None:
        names = (lm_model, cola_model, sop_model, lm_revision, cola_revision, sop_revision)
        self.checkpoints = GruenModels.from_options(dict(zip(MODEL_OPTIONS, names, strict=True)))
        self.lm, self.cola, self.sop = self.checkpoints
        self.models = ModelCache() if models is None else models

    def with_models(self, **options: Any) -> GruenScorer:
        """A scorer of the models ``options`` name (:data:`MODEL_OPTIONS`, those not given at their
        defaults) that shares this one's loaded models (itself when they are the same)."""
        same = GruenModels.from_options(options) == self.checkpoints
        return self if same else GruenScorer(**options, models=self.models)

    def signature(self, coherence: bool, lm_scoring: str, precision: str = "fp32") -> Signature:
        """What made the scores: each model with its Hub revision or folder sha256, and the settings."""
        return Signature.of(
            "gruen",
            *(f"{role}:{checkpoint.label()}" for role, checkpoint in self._signed(coherence)),
            f"lm_scoring:{lm_scoring}",
            f"coherence:{'on' if coherence else 'off'}",
            SIGNATURE_LABELS[precision],
        )

    def _signed(self, coherence: bool) -> list[tuple[str, CheckpointReference]]:
        """The models a signature names, by role."""
        return [("lm", self.lm), ("cola", self.cola)] + ([("sop", self.sop)] if coherence else [])

    @functools.partial(GRUEN_OPTIONS.keywords, leave_out=MODEL_OPTIONS)
    def score(self, texts: Sequence[str], **options: Any) -> GruenResult:
        """Each text's GRUEN score and aspects; every option and text is checked before any work.

        Text with no word (blank, invisible, punctuation or emoji only) scores 0, and a call whose
        texts all score 0 loads no model.
        """
        models = [name for name in options if name in MODEL_OPTIONS]
        if models:
            raise TypeError(
                f"score() takes no {models[0]!r}: the models are the scorer's (GruenScorer(...))."
            )
        checked = GRUEN_OPTIONS.check(options, caller="score()", leave_out=MODEL_OPTIONS)
        checked["precision"] = check_precision(checked["precision"], checked["device"])
        # Strings only (blank ones score 0); a lone surrogate is not text.
        texts = check_texts(texts, surrogates=False, allow_blank=True)
        # After the fp32 library's timing, which a hashing thread would disturb.
        hash_ahead(checkpoint for _, checkpoint in self._signed(checked["coherence"]))
        with collector_paused():
            aspects = self._aspects(texts, checked)
        return GruenResult(
            scores=aspects["gruen"],
            grammaticality=aspects["grammaticality"],
            redundancy=aspects["redundancy"],
            focus=aspects["focus"],
            coherence=aspects["coherence"],
            signature=str(self.signature(checked["coherence"], checked["lm_scoring"], checked["precision"])),
        )

    def _aspects(self, texts: list[str], checked: dict[str, Any]) -> dict[str, list]:
        """Every aspect of each checked text, under the checked options."""
        split = [text_to_sentences(text if has_word(text) else "") for text in texts]
        if any(split):
            lm_tokenizer = self.models.get("lm", self.lm, checked["device"]).tokenizer
            warn_unread_texts(texts, unknown_shares(lm_tokenizer, texts))
        return AspectScorer(
            self.models, checked["device"], checked["batch_size"], checked["precision"]
        ).score(
            split,
            lm=self.lm,
            cola=self.cola,
            sop=self.sop if checked["coherence"] else None,
            lm_scoring=checked["lm_scoring"],
        )
