"""UNION and GRUEN, learned reference-free text-quality metrics, as one installable package.

The repository keeps the design's folders (``metrics/``, ``training/``, ``hub_cards/``) at its
root; an install puts them under ``story_quality/`` (``package_dir`` in ``setup.cfg``), so
nothing lands in site-packages under a generic name such as ``metrics``. In a source tree those
folders, beside this one, are this package's subpackages: ``story_quality.metrics.union`` is
``metrics/union/`` in the clone and ``story_quality/metrics/union/`` once installed.

Load a metric the same way from anywhere::

    import evaluate
    from story_quality import metric_path
    union = evaluate.load(metric_path("union"))
"""

from __future__ import annotations

import pathlib

_HERE = pathlib.Path(__file__).resolve().parent
if not (_HERE / "metrics").is_dir():  # a source tree: the subpackages sit beside this folder
    __path__.append(str(_HERE.parent))  # noqa: F821 (a package's __path__)

METRICS = ("union", "gruen")


def metric_path(name: str) -> str:
    """The folder of metric ``name`` (``"union"`` or ``"gruen"``), for ``evaluate.load``."""
    if name not in METRICS:
        raise ValueError(f"Unknown metric {name!r}; this package has {', '.join(METRICS)}.")
    from . import metrics

    return str(pathlib.Path(metrics.__file__).resolve().parent / name)
