"""UNION and GRUEN, learned reference-free text-quality metrics, as one installable package.

The library is here: ``story_quality.union`` and ``story_quality.gruen`` (each metric's own
logic), ``story_quality.evaluation`` (correlation, significance, annotations, comparing systems),
the ``story-quality`` command (``story_quality.cli``, one module per command) and the modules both
metrics share (options, texts, devices, signature, checkpoint references and files, batching). The repository's ``metrics/``, ``training/`` and
``hub_cards/`` folders are mapped under this package by ``package_dir`` in ``setup.cfg``
(``story_quality.metrics.union`` is ``metrics/union/``), in a wheel and in an editable install
(``pip install -e .``) alike.

Load a metric the same way from anywhere::

    import evaluate
    from story_quality import metric_path
    union = evaluate.load(metric_path("union"))
"""

from __future__ import annotations

import functools
import pathlib
import re

__version__ = "0.4.0"  # setup.cfg reads it; Space requirements pin it
METRICS = ("union", "gruen")
CITATIONS = pathlib.Path(__file__).with_name("citations.bib")


def metric_path(name: str) -> str:
    """The folder of metric ``name`` (``"union"`` or ``"gruen"``), for ``evaluate.load``."""
    if name not in METRICS:
        raise ValueError(f"Unknown metric {name!r}; this package has {', '.join(METRICS)}.")
    from . import metrics

    return str(pathlib.Path(metrics.__file__).resolve().parent / name)


def option_specs() -> dict:
    """Each metric's option spec (:class:`story_quality.options.OptionSpec`), by the metric's name: what
    ``story-quality score`` turns into flags and the cards into option tables."""
    from story_quality.gruen.options import GRUEN_OPTIONS
    from story_quality.union.options import UNION_OPTIONS

    return {"union": UNION_OPTIONS, "gruen": GRUEN_OPTIONS}


@functools.cache
def citation(key: str) -> str:
    """The BibTeX entry ``key`` of the package's ``citations.bib``, ending with a newline.

    >>> citation("guan-huang-2020-union").splitlines()[0]
    '@inproceedings{guan-huang-2020-union,'
    """
    entries = {
        entry.group(1): entry.group(0) + "\n"
        for entry in re.finditer(
            r"^@\w+\{([^,]+),.*?^\}$", CITATIONS.read_text(encoding="utf-8"), re.M | re.S
        )
    }
    if key not in entries:
        raise KeyError(f"No citation {key!r} in {CITATIONS.name}; it has {', '.join(entries)}.")
    return entries[key]
