"""The Space's page: the stories of its text box reach the metric one a line; an empty box is refused."""

from __future__ import annotations

import pytest

from story_quality.cli.space_page import build_page, score_text


class Recording:
    """A metric that records what it is asked to score."""

    name = "toy"

    class info:  # noqa: N801 (evaluate's attribute name)
        description = "Counts words."

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def compute(self, predictions: list[str]) -> dict:
        self.calls.append(predictions)
        return {"scores": [float(len(text.split())) for text in predictions]}


def test_each_non_blank_line_is_one_story_in_order():
    metric = Recording()
    assert score_text(metric, "Tom ran home.\n\n   \n Ann sat. \r\nEnd") == {"scores": [3.0, 2.0, 1.0]}
    assert metric.calls == [["Tom ran home.", "Ann sat.", "End"]]


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_a_box_without_a_story_is_refused_before_the_metric_runs(text):
    metric = Recording()
    with pytest.raises(ValueError, match="at least one story"):
        score_text(metric, text)
    assert metric.calls == []


def test_the_page_is_built_on_the_installed_gradio():
    gradio = pytest.importorskip("gradio")  # the Space's own library; not a dependency of the package
    page = build_page(Recording())
    assert isinstance(page, gradio.Interface) and page.title == "Metric: toy"
