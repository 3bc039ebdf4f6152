"""The page of a metric's Space: stories typed or pasted, one per line, scored by the metric.

``publish-metric`` stages an ``app.py`` that loads the metric with ``evaluate.load`` and calls
:func:`launch_page`. It replaces evaluate's own widget (``evaluate.utils.launch_gradio_widget``),
which is written for gradio 3: gradio 3 needs ``pkg_resources`` (gone from current setuptools) and
the web libraries of its time, so a Space built today would not start. gradio is imported only here,
in the Space; the package does not depend on it.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

# The gradio the staged Space runs (its card's ``sdk_version``), the one this page was tried with.
SPACE_GRADIO = "6.31.0"


def stories_of(text: str) -> list[str]:
    """The stories of the page's text box: one a line, blank lines dropped; none is refused.

    >>> stories_of("Tom ran.\\n\\n  Ann sat down.  \\n")
    ['Tom ran.', 'Ann sat down.']
    """
    stories = [line.strip() for line in text.splitlines() if line.strip()]
    if not stories:
        raise ValueError("Type or paste at least one story, one a line.")
    return stories


def score_text(metric: Any, text: str) -> dict[str, Any]:
    """The metric's result for the stories of ``text``, as the page shows it (JSON)."""
    return metric.compute(predictions=stories_of(text))


def build_page(metric: Any) -> Any:
    """The gradio page of ``metric`` (an ``evaluate`` module taking ``predictions``)."""
    import gradio as gr

    def score(text: str) -> dict[str, Any]:
        try:
            return score_text(metric, text)
        except ValueError as error:  # a refusal is shown on the page, not as a server error
            raise gr.Error(str(error)) from None

    card = pathlib.Path(sys.argv[0]).resolve().parent / "README.md"
    article = card.read_text(encoding="utf-8").split("---", 2)[-1] if card.is_file() else None
    return gr.Interface(
        fn=score,
        inputs=gr.Textbox(lines=8, label="Stories, one a line"),
        outputs=gr.JSON(label=metric.name),
        title=f"Metric: {metric.name}",
        description=metric.info.description,
        article=article,
        flagging_mode="never",
    )


def launch_page(metric: Any) -> None:
    """Serve :func:`build_page` (what the Space's ``app.py`` runs)."""
    build_page(metric).launch()
