"""Putting GRUEN's aspects together for a list of already split texts.

All sentences of all texts go through each model as one length-sorted stream; per-text
values are means over the text's sentences, combined as released:
``gruen = min(1, max(0, grammaticality + redundancy + focus [+ coherence]))``.
A text with no sentence left after preprocessing (empty, blank, one word) gets 0.0 for
``gruen`` and ``grammaticality`` and no penalties: there is nothing well written to credit.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import torch

from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen.coherence import coherence_scores
from story_quality.gruen.focus import content_pieces, focus_score
from story_quality.gruen.grammaticality import (
    cola_scores,
    grammaticality_score,
    pll_nll_scores,
    reference_lm_scores,
)
from story_quality.gruen.loading import ModelCache
from story_quality.gruen.redundancy import redundancy_score
from story_quality.gruen.tokenization import encode_words
from story_quality.precision import autocast


def per_text_means(values: Sequence[float], texts: Sequence[Sequence[str]]) -> list[float | None]:
    """Mean of each text's slice of a flat per-sentence list (None for a text with no sentence)."""
    means, start = [], 0
    for sentences in texts:
        chunk = values[start : start + len(sentences)]
        means.append(statistics.fmean(chunk) if chunk else None)
        start += len(sentences)
    return means


class AspectScorer:
    """The aspects of already split texts, each model taken from a cache (loaded on first use)."""

    def __init__(
        self, cache: ModelCache, device: torch.device, batch_size: int, precision: str = "fp32"
    ) -> None:
        self.cache, self.device, self.batch_size = cache, device, batch_size
        self.precision = precision  # the models' forward passes run in it; focus reads weights only

    def score(
        self,
        texts: Sequence[Sequence[str]],
        lm: CheckpointReference,
        cola: CheckpointReference,
        sop: CheckpointReference | None,
        lm_scoring: str,
    ) -> dict[str, list]:
        n = len(texts)
        grammar, redundancy, focus = [0.0] * n, [0.0] * n, [0.0] * n
        coherence: list[float | None] = [0.0 if sop else None] * n
        flat = [s for sentences in texts for s in sentences]
        if flat:
            lm_model = self.cache.get("lm", lm, self.device)
            lm_fn = reference_lm_scores if lm_scoring == "reference" else pll_nll_scores
            cola_model = self.cache.get("cola", cola, self.device)
            with autocast(self.precision, self.device):
                lm_values = per_text_means(lm_fn(lm_model, flat, self.batch_size), texts)
                cola_values = per_text_means(cola_scores(cola_model, flat, self.batch_size), texts)
            focus = self._focus(lm_model, flat, texts)
            for t, (lm_value, cola_value) in enumerate(zip(lm_values, cola_values, strict=True)):
                if lm_value is not None:
                    grammar[t] = grammaticality_score(lm_value, cola_value)
                    redundancy[t] = redundancy_score(texts[t])
            if sop:
                sop_model = self.cache.get("sop", sop, self.device)
                with autocast(self.precision, self.device):
                    coherence = coherence_scores(sop_model, texts, self.batch_size)
        final = [
            min(1.0, max(0.0, g + r + f + (c or 0.0))) if sentences else 0.0
            for sentences, g, r, f, c in zip(texts, grammar, redundancy, focus, coherence, strict=True)
        ]
        return {
            "gruen": final,
            "grammaticality": grammar,
            "redundancy": redundancy,
            "focus": focus,
            "coherence": coherence,
        }

    @staticmethod
    def _focus(lm_model, flat: Sequence[str], texts: Sequence[Sequence[str]]) -> list[float]:
        """Focus per text from the masked LM's input embeddings (bags cut to the model window)."""
        tokenizer = lm_model.tokenizer
        special = set(tokenizer.all_special_ids)
        bags = [
            content_pieces(ids[: lm_model.window], tokenizer, special) for ids in encode_words(lm_model, flat)
        ]
        embeddings = lm_model.model.get_input_embeddings().weight.detach()
        scores, start = [], 0
        for sentences in texts:
            scores.append(focus_score(bags[start : start + len(sentences)], embeddings))
            start += len(sentences)
        return scores
