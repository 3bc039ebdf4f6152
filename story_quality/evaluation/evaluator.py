"""Scoring generated text with ``evaluate``'s evaluator: union and gruen behind a text-generation pipeline.

``evaluate.evaluator("text-generation")`` hands the generated texts to the metric as ``data=``
and bootstraps every key of the result by calling ``compute`` once per resample, which a string
(``signature``) or a list (``scores``) cannot be. :class:`GeneratedTextEvaluator` is that
evaluator for these metrics: it hands the texts over as ``predictions=``, and its bootstrap
resamples the per-text ``scores`` of the one ``compute`` call to give the interval of their mean
(``union_score``, ``gruen_score``), with the package's one bootstrap
(:func:`story_quality.evaluation.significance.bootstrap_mean`, the percentile interval ``compare``
reports; evaluate's own uses scipy's BCa, which gives nan for equal scores). Both metrics score each text on its own (a score does not
depend on the other texts of the call), so resampling the scores is what recomputing the metric
on resampled texts gives, without thousands of model calls. ::

    from story_quality.evaluation.evaluator import GeneratedTextEvaluator

    task = GeneratedTextEvaluator()
    result = task.compute(model_or_pipeline=generator, data=prompts, input_column="text",
                          metric=evaluate.load(metric_path("union")), strategy="bootstrap")
    result["union_score"]    # {"score": ..., "confidence_interval": (low, high), "standard_error": ...}
    result["signature"]      # as compute returned it
"""

from __future__ import annotations

from typing import Any

import numpy
from evaluate.evaluator import TextGenerationEvaluator
from transformers import PreTrainedModel

from story_quality.evaluation import significance
from story_quality.registry import means_of

# The mean keys of each metric's result, and the per-text key each is the mean of.
MEANS_OF = means_of()


class GeneratedTextEvaluator(TextGenerationEvaluator):
    """``evaluate``'s text-generation evaluator for union and gruen (see the module's docstring)."""

    def predictions_processor(self, predictions: Any, *args: Any, **kwargs: Any) -> dict[str, list[str]]:
        """The generated texts, flattened in pipeline order, as the metrics' ``predictions``."""
        return {"predictions": super().predictions_processor(predictions, *args, **kwargs)["data"]}

    def prepare_pipeline(self, model_or_pipeline: Any, *args: Any, **kwargs: Any) -> Any:
        """A ready pipeline as it is; a model or a name built into one by evaluate. evaluate 0.4.6
        tests a ready pipeline against ``transformers.TFPreTrainedModel``, which transformers v5
        no longer has, so it would fail before generating anything."""
        if model_or_pipeline is None or isinstance(model_or_pipeline, str | PreTrainedModel):
            return super().prepare_pipeline(model_or_pipeline, *args, **kwargs)
        if getattr(model_or_pipeline, "task", self.task) != self.task:
            raise ValueError(
                f"model_or_pipeline is a {model_or_pipeline.task!r} pipeline; this evaluator needs a "
                f"{self.task!r} one."
            )
        return model_or_pipeline

    def compute_metric(
        self,
        metric: Any,
        metric_inputs: dict,
        strategy: str = "simple",
        confidence_level: float = 0.95,
        n_resamples: int = 9999,
        random_state: int | None = None,
    ) -> dict:
        """The metric's result; with ``strategy="bootstrap"``, each mean key becomes evaluate's
        ``{"score", "confidence_interval", "standard_error"}`` and the other keys stay as they are."""
        result = metric.compute(**metric_inputs, **self.METRIC_KWARGS)
        if strategy != "bootstrap":
            return result
        return bootstrap_means(result, confidence_level, n_resamples, random_state)


def bootstrap_means(
    result: dict,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    random_state: int | numpy.random.Generator | None = None,
) -> dict:
    """``result`` with each key of :data:`MEANS_OF` replaced by its score and the bootstrap interval of
    the mean of its per-text scores.

    The interval is the package's one bootstrap (:func:`story_quality.evaluation.significance.bootstrap_mean`,
    the percentile bootstrap ``story-quality compare`` reports): the same scores, ``n_resamples`` and
    seed (``random_state``, compare's ``--seed``) give compare's interval, and scores that are all
    equal give the interval of that value. ``confidence_level`` is a fraction, as evaluate takes
    it (0.95 for 95 %); ``random_state`` None draws a fresh seed, as evaluate's does.

    >>> out = bootstrap_means({"scores": [0.2, 0.4, 0.9], "union_score": 0.5, "signature": "s"}, random_state=0)
    >>> out["union_score"]["score"], out["signature"]
    (0.5, 's')
    >>> low, high = out["union_score"]["confidence_interval"]; bool(0.2 <= low < 0.5 < high <= 0.9)
    True
    """
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, int | float):
        raise TypeError(f"confidence_level must be a number between 0 and 1, got {confidence_level!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(
            f"confidence_level must be a fraction between 0 and 1, as evaluate takes it (0.95 for a 95 % "
            f"interval), got {confidence_level!r}"
        )
    seed = _seed(random_state)
    out = dict(result)
    for key, per_text in MEANS_OF.items():
        if key not in result or per_text not in result:
            continue
        scores = numpy.asarray(result[per_text], dtype=float)
        if scores.size < 2:
            raise ValueError(f"A bootstrap interval of {key} needs at least two texts, got {scores.size}.")
        interval, standard_error = significance.bootstrap_mean(scores, n_resamples, seed, confidence_level)
        out[key] = {
            "score": result[key],
            "confidence_interval": (interval.low, interval.high),
            "standard_error": standard_error,
        }
    return out


def _seed(random_state: int | numpy.random.Generator | None) -> int:
    """The bootstrap's seed: an integer as it is, one drawn from a Generator, or a fresh one for None."""
    if random_state is None:
        return int(numpy.random.SeedSequence().entropy) % 2**significance.SEED_BITS
    if isinstance(random_state, numpy.random.Generator):
        return int(random_state.integers(0, 2**63))
    if (
        isinstance(random_state, int | numpy.integer)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return int(random_state)
    raise TypeError(
        f"random_state must be a non-negative integer seed, a numpy Generator or None, got {random_state!r}"
    )
