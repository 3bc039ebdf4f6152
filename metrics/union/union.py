"""UNION: an unreferenced metric of story coherence (Guan & Huang, EMNLP 2020).

A thin ``evaluate.Metric`` over :class:`story_quality.union.UnionScorer`, as evaluate's
``bleurt.py`` is over ``BleurtScorer``: the checkpoint is the config name, loaded once per
instance; the checks, normalisation, reading of long stories and batched scoring live in the
scorer, the options in ``story_quality.union.options``.
"""

from __future__ import annotations

import hashlib
import os

import evaluate
import torch

from story_quality import metric_module  # From: story-quality-metrics
from story_quality.options import CONFIG_NAME_ARGUMENTS  # From: story-quality-metrics
from story_quality.registry import REGISTRY  # From: story-quality-metrics
from story_quality.union import CITATION, UnionScorer  # From: story-quality-metrics
from story_quality.union.checkpoints import is_config_name  # From: story-quality-metrics
from story_quality.union.options import DEFAULT_BATCH_SIZE, UNION_OPTIONS  # From: story-quality-metrics

_DESCRIPTION = """\
UNION scores how coherent a story is, without a reference story. It is a BERT classifier
trained to tell human-written stories from automatically corrupted copies of them
(repeated plot, substituted and reordered sentences, negated events). The score of a story
is the classifier's probability that it is human-written: 1 reads as coherent, 0 as broken.

The checkpoint is the config name, evaluate.load's second argument: "default" (the shipped
default, inside the package), any Hub model id (add "@revision" to pin one), or a local
directory written by training/train_union.py.
"""

_KWARGS_DESCRIPTION = """
Scores each story with a UNION checkpoint.

Args:
    predictions (`list` of `str`): the stories to score, each one string, leading context
        (the first sentence, or the prompt) included, as UNION was trained.
    references: not used, UNION is unreferenced; given (evaluate.combine passes them to every
        metric) they are left out with a warning.
{options}

Returns:
    scores (`list` of `float`): P(human-written) for each story, in input order, in [0, 1];
        higher is more coherent.
    union_score (`float`): the mean of `scores` (NaN when there are no stories).
    percentiles (`list` of `float`, with `percentiles=` only): each story's percentile, 0-100, among
        the human stories of the domain: the share of them scoring lower, ties counted half. A
        place among one set of human stories, not a probability.
    signature (`str`): what made the scores (checkpoint and its revision or the sha256 of its weights, config and tokenizer files,
        normalisation, window, precision, package version); report it with the numbers.

Examples:
    >>> from story_quality import metric_path
    >>> union = evaluate.load(metric_path("union"))  # the shipped default, from any folder
    >>> results = union.compute(predictions=[
    ...     "Ken went to the store. He bought milk. He went home.",
    ...     "Ken went to the store. Ken went to the store. He did not go home.",
    ... ])
    >>> sorted(results)
    ['scores', 'signature', 'union_score']
    >>> [0.0 <= s <= 1.0 for s in results["scores"]]
    [True, True]
    >>> results["scores"][0] > results["scores"][1]  # the repeated plot reads as less coherent
    True
    >>> abs(results["union_score"] - sum(results["scores"]) / 2) < 1e-9
    True
    >>> union.compute(predictions=[])["scores"]
    []
""".replace("{options}", UNION_OPTIONS.args_text())

PAPER_URL = "https://aclanthology.org/2020.emnlp-main.736"
CODE_URL = "https://github.com/thu-coai/UNION"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Union(metric_module.ScorerMetric, evaluate.Metric):
    entry = REGISTRY["union"]
    config_name_arguments = CONFIG_NAME_ARGUMENTS

    def _info(self) -> evaluate.MetricInfo:
        return metric_module.text_metric_info(
            _DESCRIPTION, _KWARGS_DESCRIPTION, CITATION, PAPER_URL, codebase_url=CODE_URL
        )

    def _build_data_dir(self) -> str:
        # evaluate joins config_name into its cache path: a local checkpoint path would make the
        # checkpoint directory itself the cache (lock and arrow files written into it).
        safe = self.config_name if is_config_name(self.config_name) else _cache_key(self.config_name)
        data_dir = os.path.join(self._data_dir_root, self.name, safe)
        os.makedirs(data_dir, exist_ok=True)
        return data_dir

    def _download_and_prepare(self, dl_manager) -> None:
        """Load the checkpoint once per metric instance; compute calls reuse it."""
        self.scorer = UnionScorer(self.config_name)

    def _compute(
        self,
        predictions: list[str],
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | int | torch.device | None = None,
        max_length: int | None = None,
        long_stories: str | None = None,
        percentiles: str | None = None,
        precision: str = "fp32",
        num_workers: int | None = None,
    ) -> dict:
        return self.scored(predictions, locals())


def _cache_key(name: str) -> str:
    return "checkpoint-" + hashlib.sha256(name.encode()).hexdigest()[:16]
