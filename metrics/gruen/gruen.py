"""GRUEN: reference-free linguistic quality from grammaticality, non-redundancy, focus and structure."""

from __future__ import annotations

import evaluate
import torch

from story_quality import validation  # From: story-quality-metrics
from story_quality.gruen import CITATION, GruenScorer, checkpoints  # From: story-quality-metrics
from story_quality.gruen.options import DEFAULT_BATCH_SIZE, GRUEN_OPTIONS  # From: story-quality-metrics
from story_quality.sharing import SharedInstance  # From: story-quality-metrics

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
    lm_model (str): masked LM, Hub id or local directory. Default "google-bert/bert-base-cased".
    cola_model (str): CoLA classifier (class 1 = acceptable). Default "Apucs/bert-fine-tuned-cola"
        at a pinned commit (bert-base-cased fine-tuned on CoLA, validation MCC 0.5731 by its card;
        the release's own fine-tune was never published).
    sop_model (str): ALBERT-style model with a sentence-order head. Default "albert/albert-base-v2".
    lm_revision, cola_revision, sop_revision (str, optional): pinned Hub revisions (the default
        CoLA model's pinned commit is used when cola_revision is not given).
    coherence (bool): add the structure/coherence term (-SOP loss). Default False, as released.
        True or False only: a string ("false") or a number is refused, naming the option.
    lm_scoring (str): "reference" (the release's unmasked LM term; matches published GRUEN)
        or "pll" (the paper's pseudo-log-likelihood, every token masked in turn).
    batch_size (int): sequences per forward pass. Default 32.
    device (str, optional): "cpu", "cuda", ... Default: CUDA when available.
    precision (str): "fp32" (default) or "bf16": bf16 autocast of the three models, faster on
        GPUs with bf16 and CPUs with AMX or AVX-512 BF16 (refused on other hardware); scores move
        slightly and the signature says "bf16-autocast".
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
    >>> gruen = evaluate.load("gruen")  # outside evaluate's own tests: story_quality.metric_path("gruen")
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
"""

PAPER_URL = "https://aclanthology.org/2020.findings-emnlp.9"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Gruen(SharedInstance, validation.CheckedInputs, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return validation.text_metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, CITATION, PAPER_URL)

    def check_predictions(self, predictions) -> list[str]:
        """Strings only (blank ones score 0); a lone surrogate is not text."""
        return validation.check_texts(predictions, surrogates=False, allow_blank=True)

    def _download_and_prepare(self, dl_manager) -> None:
        """The default models, loaded when first needed; compute calls with other models share them."""
        self.scorer = GruenScorer()

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check every text before ``evaluate`` stores them (it would turn None and numbers into strings)."""
        validation.check_options(kwargs, GRUEN_OPTIONS.names)
        if predictions is not None or (self.writer is None and self.num_process == 1):
            predictions = self.check_predictions(predictions)
        return super().compute(predictions=predictions, references=references, **kwargs)

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
        scorer = self.scorer.with_models(
            lm_model, cola_model, sop_model, lm_revision, cola_revision, sop_revision
        )
        return scorer.score(predictions, coherence, lm_scoring, batch_size, device, precision).as_dict()
