"""What both ``evaluate.Metric`` subclasses share: their info, checked inputs, and one instance shared
between threads (one call at a time) and processes (pickled as a reload).

:func:`text_metric_info` builds the ``MetricInfo`` of a metric whose only input is text;
:class:`CheckedInputs` checks every text before ``evaluate`` stores it; :class:`SharedInstance`
makes an instance safe to share:

``evaluate`` keeps each instance's inputs in its own cache file and writer, so two threads
computing or adding at once on one instance corrupt each other's state (two ``add`` calls that
both find no writer each open one, and the first one's texts are lost); here ``compute``,
``add`` and ``add_batch`` take turns instead, on one re-entrant lock (``evaluate``'s ``compute``
calls ``add_batch`` itself).
A loaded model and ``evaluate``'s locks cannot be pickled, so an instance pickles as the call
that loads it again (:func:`reload_metric`), which gives each spawned worker its own copy. A
forked worker (``datasets.map(num_proc=N)`` on Linux) inherits the parent's instance and runs
torch on one thread (:func:`_one_thread_after_fork`). Both metrics use it.
"""

from __future__ import annotations

import inspect
import os
import threading
import warnings
from typing import Any

import evaluate
import torch

from story_quality.options import check_options
from story_quality.registry import MetricEntry
from story_quality.text_checks import check_texts
from story_quality.warning_origin import user_stacklevel


class SharedInstance:
    """Mixin for an ``evaluate.Metric`` subclass (put it first among the bases)."""

    def compute(self, *args, **kwargs):
        """``evaluate``'s compute, one thread at a time."""
        with self.taking_turns():
            return super().compute(*args, **kwargs)

    def add_batch(self, *args, **kwargs):
        """``evaluate``'s add_batch, one thread at a time."""
        with self.taking_turns():
            return super().add_batch(*args, **kwargs)

    def add(self, *args, **kwargs):
        """``evaluate``'s add, one thread at a time."""
        with self.taking_turns():
            return super().add(*args, **kwargs)

    def taking_turns(self) -> threading.RLock:
        """The instance's lock (re-entrant): hold it around any use of its model, writer or cache."""
        return self.__dict__.setdefault("_compute_lock", threading.RLock())  # atomic: one lock per instance

    def __reduce__(self):
        return (reload_metric, (inspect.getfile(type(self)), self.config_name))


def reload_metric(script: str, config_name: str) -> evaluate.EvaluationModule:
    """Unpickling an instance: load it again, in memory (workers reloading at once must not queue
    on one cache file's lock)."""
    return evaluate.load(script, config_name, keep_in_memory=True)


def _one_thread_after_fork() -> None:
    """torch's OpenMP thread pool does not survive ``fork``: in a forked child (a ``datasets.map``
    worker) the first parallel operation would wait forever for the parent's threads. One thread
    needs no pool; PyTorch's own DataLoader workers run the same way."""
    torch.set_num_threads(1)


os.register_at_fork(after_in_child=_one_thread_after_fork)


def text_metric_info(
    description: str,
    inputs_description: str,
    citation: str,
    reference_url: str,
    codebase_url: str | None = None,
):
    """The ``evaluate.MetricInfo`` of a metric whose only input is ``predictions``, one string each."""
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=datasets.Features({"predictions": datasets.Value("string")}),
        codebase_urls=[codebase_url] if codebase_url else [],
        reference_urls=[reference_url],
    )


class CheckedInputs:
    """Mixin for an ``evaluate.Metric``: every text is checked before ``evaluate`` stores it.

    ``evaluate`` encodes what ``add_batch``/``add`` receive with Arrow, which would turn 5 into
    "5" and None into a null without a word; here the metric's own check runs first.
    """

    def check_predictions(self, predictions: Any) -> list[str]:
        return check_texts(predictions)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Check every text, then store the batch as ``evaluate`` does."""
        warn_unused_references(self.name, references)
        return super().add_batch(
            predictions=self.check_predictions(predictions), references=references, **kwargs
        )

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Check one text, then store it as ``evaluate`` does.

        ``evaluate.combine([...]).add(prediction=x)`` hands the text over as ``predictions=x`` (the
        feature's name): one text under either name is taken, both at once are refused.
        """
        prediction = one_prediction(prediction, kwargs.pop("predictions", None))
        warn_unused_references(self.name, reference)
        return super().add(prediction=self.check_predictions([prediction])[0], reference=reference, **kwargs)


def warn_unused_references(metric: str, references: Any) -> None:
    """Say that ``references`` are not used, when given: both metrics score each story alone.

    Not refused: ``evaluate.combine([...]).compute(predictions=..., references=...)`` hands the
    references to every metric it combines, so that refusing them would break combining with a
    metric that reads them (evaluate itself drops them without a word).
    """
    if references is None:
        return
    warnings.warn(
        f"{metric} is unreferenced: it scores each story alone, so the references= given are not used "
        f"(evaluate.combine hands them to every metric; {metric} alone needs none).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def one_prediction(prediction: Any, predictions: Any) -> Any:
    """The one text ``add`` was given, as ``prediction=`` (evaluate's name) or ``predictions=``
    (the name ``evaluate.combine`` passes); refused when given under both names.

    >>> one_prediction(None, "A story.")
    'A story.'
    """
    if prediction is not None and predictions is not None:
        raise TypeError(
            "add() got the text twice, as prediction= and predictions=; pass one text as prediction=."
        )
    return predictions if prediction is None else prediction


class ScorerMetric(SharedInstance, CheckedInputs):
    """Mixin for a metric of :mod:`story_quality.registry` (first among the bases): its one
    ``compute`` path and the body of its ``_compute``.

    ``compute`` checks the option names (one of ``config_name_arguments`` is sent to
    ``evaluate.load``) and every text before any work. A list of texts given to a metric of one
    process with nothing added by ``add_batch`` is scored as given: ``evaluate``'s own path writes
    every text to an Arrow file and reads them all back into a second list, which doubles the
    memory of a large call and gives the same texts. Texts added with ``add_batch``, or several
    processes, go through ``evaluate``'s path.
    """

    entry: MetricEntry
    config_name_arguments: tuple[str, ...] = ()

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check every option and text before ``evaluate`` stores them (it would turn 5 into "5"); an
        option's old name is taken as its new one, with a warning."""
        kwargs = self.entry.options.current_names(kwargs)
        check_options(kwargs, self.entry.options.names, self.config_name_arguments)
        warn_unused_references(self.name, references)
        with self.taking_turns():  # another thread's add must not land between the check and the work
            alone = self.num_process == 1 and self.writer is None
            if predictions is None:  # score what add_batch gathered
                if alone:
                    self.check_predictions(None)
                return super().compute(references=references, **kwargs)
            texts = self.check_predictions(predictions)
            if alone:
                return self._compute(texts, **kwargs)
            return super().compute(predictions=texts, references=references, **kwargs)

    def scored(self, predictions: list[str], arguments: dict[str, Any]) -> dict:
        """``_compute``'s result from its ``arguments`` (its ``locals()``): the scorer (of other models
        when the entry's scorer options name them) applied to ``predictions`` with the options."""
        options = {name: arguments[name] for name in self.entry.options.names}
        building = {name: options.pop(name) for name in self.entry.scorer_options}
        scorer = self.scorer.with_models(**building) if building else self.scorer
        return scorer.score(predictions, **options).as_dict()
