"""GRUEN: reference-free linguistic quality from grammaticality, non-redundancy, focus and structure."""

from __future__ import annotations

import evaluate
import torch

from story_quality import metric_module  # From: story-quality-metrics
from story_quality.gruen import CITATION, GruenScorer, checkpoints  # From: story-quality-metrics
from story_quality.gruen.options import DEFAULT_BATCH_SIZE, GRUEN_OPTIONS  # From: story-quality-metrics
from story_quality.registry import REGISTRY  # From: story-quality-metrics
from story_quality.text_checks import check_texts  # From: story-quality-metrics

_DESCRIPTION = """\
GRUEN scores the linguistic quality of a text without any reference: grammaticality (a
masked LM's fluency plus a CoLA acceptability classifier, per sentence), non-redundancy
(string rules over every sentence pair), focus (Word Mover Similarity of adjacent
sentences) and, optionally, structure and coherence (ALBERT sentence-order prediction).
The final score is clipped to [0, 1]; higher is better.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the texts to score. A text with no sentence of two or more
        words (empty, blank, one word) scores 0.0 for `gruen` and `grammaticality`, with no
        redundancy or focus penalty.
    references: not used, GRUEN is unreferenced; given (evaluate.combine passes them to every
        metric) they are left out with a warning.
{options}
Returns:
    scores (list of float): the final score of each text, in [0, 1], higher is better (the
        union metric's key for the same thing).
    gruen_score (float): mean of `scores` (NaN for no text), as union's `union_score`.
    gruen (list of float): the same as `scores`, the key earlier versions returned.
    grammaticality (list of float): >= 0, higher is better.
    redundancy (list of float): <= 0, -0.1 per redundancy flag.
    focus (list of float): 0 or -0.1.
    coherence (list of float or None): <= 0 (minus the mean SOP loss); None when coherence=False.
    mean_gruen (float): the same as `gruen_score`, the key earlier versions returned.
    signature (str): what made the scores (each model with its revision or the sha256 of its weights, config and tokenizer files,
        lm_scoring, coherence, package version); report it with the numbers.
Examples:
    >>> from story_quality import metric_path
    >>> gruen = evaluate.load(metric_path("gruen"))  # from any folder
    >>> texts = ["The dog ran home. The dog ran home.", "   "]
    >>> results = gruen.compute(predictions=texts)
    >>> sorted(results)
    ['coherence', 'focus', 'grammaticality', 'gruen', 'gruen_score', 'mean_gruen', 'redundancy', 'scores', 'signature']
    >>> results["redundancy"]  # a repeated sentence raises all four flags, -0.1 each
    [-0.4, 0.0]
    >>> results["gruen"][1], results["coherence"]  # nothing to score in a blank text; coherence off
    (0.0, [None, None])
    >>> with_order = gruen.compute(predictions=["I ate. Then I slept."], coherence=True)
    >>> with_order["coherence"][0] <= 0.0 and 0.0 <= with_order["gruen"][0] <= 1.0
    True
""".replace("{options}", GRUEN_OPTIONS.args_text())

PAPER_URL = "https://aclanthology.org/2020.findings-emnlp.9"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Gruen(metric_module.ScorerMetric, evaluate.Metric):
    entry = REGISTRY["gruen"]

    def _info(self) -> evaluate.MetricInfo:
        # evaluate sets config_name before asking for the info: refuse one GRUEN would ignore.
        if self.config_name != "default":
            raise ValueError(
                f"gruen takes no config name, got {self.config_name!r}: GRUEN's models are chosen by "
                "lm_model=, cola_model= and sop_model= in compute."
            )
        return metric_module.text_metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, CITATION, PAPER_URL)

    def check_predictions(self, predictions) -> list[str]:
        """Strings only (blank ones score 0); a lone surrogate is not text."""
        return check_texts(predictions, surrogates=False, allow_blank=True)

    def _download_and_prepare(self, dl_manager) -> None:
        """The default models, loaded when first needed; compute calls with other models share them."""
        self.scorer = GruenScorer()

    def _compute(
        self,
        predictions,
        lm_model: str = checkpoints.LM_CHECKPOINT,
        cola_model: str = checkpoints.COLA_CHECKPOINT,
        sop_model: str = checkpoints.SOP_CHECKPOINT,
        lm_revision: str | None = None,
        cola_revision: str | None = None,
        sop_revision: str | None = None,
        coherence: bool = False,
        lm_scoring: str = "reference",
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | int | torch.device | None = None,
        precision: str = "fp32",
    ) -> dict:
        return self.scored(predictions, locals())
