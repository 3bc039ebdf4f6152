"""The metric cards' examples work from any folder, and references= are never dropped without a word."""

from __future__ import annotations

import doctest
import re
import warnings

import evaluate
import pytest
from conftest import REPO

from story_quality import METRICS, metric_path

CARDS = [REPO / "README.md", *(REPO / "metrics" / name / "README.md" for name in METRICS)]
SCRIPTS = [REPO / "metrics" / name / f"{name}.py" for name in METRICS]
# What an example may load: a metric by metric_path (any folder), its Space by Hub id, or a placeholder.
LOADABLE = re.compile(
    r'evaluate\.load\((metric_path\(|"story-quality-metrics/|\.\.\.|story_quality\.metric_path\()'
)


def examples(path) -> list[str]:
    """The ``python`` blocks of a card, or the docstrings' examples of a script."""
    text = path.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S) if path.suffix == ".md" else [text]


@pytest.mark.parametrize("path", CARDS + SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_example_loads_a_metric_the_way_that_works_from_any_folder(path):
    loads = [line for block in examples(path) for line in block.splitlines() if "evaluate.load(" in line]
    assert loads and [line for line in loads if not LOADABLE.search(line)] == []


def test_the_union_cards_examples_run_from_another_folder(tmp_path, monkeypatch):
    """The card's doctest block, verbatim, in a folder with no metrics/ beside it."""
    card = (REPO / "metrics" / "union" / "README.md").read_text(encoding="utf-8")
    block = re.search(r"### Examples\n\n```python\n(.*?)```", card, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(block, {}, "union card", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=len(test.examples))


@pytest.fixture(scope="module")
def union():
    return evaluate.load(metric_path("union"))


STORIES = ["Ken went to the store. He bought milk. He went home.", "Tom sat. Tom sat. Tom sat."]
UNUSED = (
    "union is unreferenced: it scores each story alone, so the references= given are not used "
    "(evaluate.combine hands them to every metric; union alone needs none)."
)


def test_references_are_not_used_and_a_warning_says_so(union):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with_references = union.compute(predictions=STORIES, references=["a reference", "another"])
    assert [str(w.message) for w in caught if w.category is UserWarning] == [UNUSED]
    assert caught[0].filename == __file__  # pointed at the caller
    assert with_references["scores"] == union.compute(predictions=STORIES)["scores"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        union.add_batch(predictions=STORIES, references=["r1", "r2"])
        union.compute()
        union.compute(predictions=STORIES)
    assert [str(w.message) for w in caught if w.category is UserWarning] == [UNUSED]


def test_combine_with_references_still_scores(union):
    """evaluate.combine hands references to every metric: union warns and scores, never refuses."""
    combined = evaluate.combine([union])
    with pytest.warns(UserWarning, match="union is unreferenced"):
        result = combined.compute(predictions=STORIES, references=["r1", "r2"])
    assert result["scores"] == union.compute(predictions=STORIES)["scores"]
