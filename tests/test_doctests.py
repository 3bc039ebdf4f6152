"""Every docstring example of the library runs as part of the suite, so none can drift from the code.

Modules are found by walking the installed ``story_quality`` package (itself and training
included) and the repository's ``benchmarks``; the metric scripts' own examples need a loaded
metric and run in ``test_union_metric`` / ``test_gruen_metric`` as evaluate's metric test does.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import benchmarks
import story_quality
import story_quality.training

SKIPPED = (
    "story_quality.metrics.",
    "story_quality.__main__",
    "story_quality.union.text",
)  # text: an old name


def modules_with_examples() -> list[str]:
    names = []
    found = [
        "story_quality",  # the package's own __init__, which walk_packages does not list
        *(info.name for info in pkgutil.walk_packages(story_quality.__path__, "story_quality.")),
        *(
            info.name
            for info in pkgutil.walk_packages(story_quality.training.__path__, "story_quality.training.")
        ),
        "benchmarks",
        *(info.name for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks.")),
    ]
    for name in found:
        if name.startswith(SKIPPED) or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        if doctest.DocTestFinder().find(module) and any(
            t.examples for t in doctest.DocTestFinder().find(module)
        ):
            names.append(name)
    return names


MODULES = modules_with_examples()


def test_the_walk_finds_the_modules_that_hold_examples():
    expected = {
        "story_quality.citations",
        "benchmarks.dev_sets",
        "story_quality.union.normalization",
        "story_quality.gruen.redundancy",
        "story_quality.training.corpora",
    }
    assert expected <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed"
