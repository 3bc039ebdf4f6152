"""coherence_fluency: UNION's coherence and a fluency reader's fluency, fused late, for stories.

A thin ``evaluate.Metric`` over :class:`story_quality.coherence_fluency.scorer.CoherenceFluencyScorer`:
the fluency reader (with its fusion constants) is the config name, loaded once per instance with
UNION's shipped default; the checks, reading and fusion live in the library, the options in
``story_quality.coherence_fluency.options``.
"""

from __future__ import annotations

import hashlib
import os

import evaluate
import torch

from story_quality import metric_module  # From: story-quality-metrics
from story_quality.coherence_fluency.options import (  # From: story-quality-metrics
    COHERENCE_FLUENCY_OPTIONS,
    DEFAULT_BATCH_SIZE,
)
from story_quality.coherence_fluency.scorer import (  # From: story-quality-metrics
    SHIPPED_READER,
    CoherenceFluencyScorer,
)
from story_quality.options import CONFIG_NAME_ARGUMENTS  # From: story-quality-metrics
from story_quality.registry import REGISTRY  # From: story-quality-metrics
from story_quality.union import CITATION  # From: story-quality-metrics

_DESCRIPTION = """\
coherence_fluency scores a story for what people rate in generated stories: whether it holds
together (UNION's coherence: a classifier of human stories against corrupted copies) and whether
its sentences read as human prose rather than a weak generator's (a small sentence classifier of
human story sentences against an n-gram model's). Each part becomes a z-score among held-back
human stories by constants shipped with the reader, and the score is their weighted sum: 0 is a
typical human story, negative is worse. No statistic of the other stories in a call enters a score.

The config name, evaluate.load's second argument, is the fluency reader: "default" (shipped inside
the package) or a folder written by training/train_fluency.py holding its fusion.json.
"""

_KWARGS_DESCRIPTION = """
Scores each story by coherence and fluency, fused.

Args:
    predictions (`list` of `str`): the stories to score, each one string (leading context or prompt
        included).
    references: not used; given (evaluate.combine passes them to every metric) they are left out
        with a warning.
{options}

Returns:
    scores (`list` of `float`): the fused score of each story, in input order; 0 is the human
        stories' mean, higher is better.
    coherence_fluency_score (`float`): the mean of `scores` (NaN when there are no stories).
    union (`list` of `float`): UNION's P(human-written) of each story (the coherence part).
    fluency (`list` of `float`): the fluency reader's mean sentence logit of each story (the fluency
        part; above 0 reads as human prose).
    signature (`str`): what made the scores (the reader's files' sha256, UNION's checkpoint, window,
        precision, package version); report it with the numbers.

Examples:
    >>> from story_quality import metric_path
    >>> metric = evaluate.load(metric_path("coherence_fluency"))  # the shipped reader, offline
    >>> results = metric.compute(predictions=[
    ...     "Ken went to the store. He bought milk. He went home happy.",
    ...     "Ken went to the the store milk. Bought he the went of. Home happy the.",
    ... ])
    >>> sorted(results)
    ['coherence_fluency_score', 'fluency', 'scores', 'signature', 'union']
    >>> results["fluency"][0] > results["fluency"][1]  # word salad reads as generated
    True
    >>> results["scores"][0] > results["scores"][1]
    True
    >>> metric.compute(predictions=[])["scores"]
    []
""".replace("{options}", COHERENCE_FLUENCY_OPTIONS.args_text())

PAPER_URL = "https://aclanthology.org/2020.emnlp-main.736"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CoherenceFluency(metric_module.ScorerMetric, evaluate.Metric):
    entry = REGISTRY["coherence_fluency"]
    config_name_arguments = CONFIG_NAME_ARGUMENTS

    def _info(self) -> evaluate.MetricInfo:
        return metric_module.text_metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, CITATION, PAPER_URL)

    def _build_data_dir(self) -> str:
        # a reader folder as config name would become evaluate's cache folder: keep its files untouched
        safe = self.config_name if self.config_name == SHIPPED_READER else _cache_key(self.config_name)
        data_dir = os.path.join(self._data_dir_root, self.name, safe)
        os.makedirs(data_dir, exist_ok=True)
        return data_dir

    def _download_and_prepare(self, dl_manager) -> None:
        """Load the reader and UNION once per metric instance; compute calls reuse them."""
        self.scorer = CoherenceFluencyScorer(self.config_name)

    def _compute(
        self,
        predictions: list[str],
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | int | torch.device | None = None,
        precision: str = "fp32",
    ) -> dict:
        return self.scored(predictions, locals())


def _cache_key(name: str) -> str:
    return "reader-" + hashlib.sha256(name.encode()).hexdigest()[:16]
