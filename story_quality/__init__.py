"""UNION and GRUEN, learned reference-free text-quality metrics, as one installable package.

The library is here, in rooms (``union``, ``gruen``, ``cli``, ``evaluation``, ``score_file``,
``bert_forward``, ``checkpoints``; ``registry`` lists the metrics) beside the modules both metrics
share. The repository's ``metrics/``, ``training/`` and ``hub_cards/`` folders are linked into this
package (``story_quality/metrics`` is a link to ``../metrics``), so a clone, an editable install
and a wheel hold the same files under the same names (``story_quality.metrics.union``).

Load a metric the same way from anywhere::

    import evaluate
    from story_quality import metric_path
    union = evaluate.load(metric_path("union"))
"""

from __future__ import annotations

import pathlib

from story_quality.citations import citation

__all__ = ["METRICS", "__version__", "citation", "metric_path"]
__version__ = "0.5.0"  # setup.cfg reads it; Space requirements pin it


def __getattr__(name: str) -> tuple[str, ...]:
    """``METRICS``, the metrics' names, read from :mod:`story_quality.registry` when first asked for."""
    if name == "METRICS":
        from story_quality.registry import METRICS

        return METRICS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def metric_path(name: str) -> str:
    """The folder of metric ``name`` (one of :data:`story_quality.registry.METRICS`), for ``evaluate.load``."""
    from story_quality.registry import METRICS

    if name not in METRICS:
        raise ValueError(f"Unknown metric {name!r}; this package has {', '.join(METRICS)}.")
    from . import metrics

    return str(pathlib.Path(metrics.__file__).resolve().parent / name)
