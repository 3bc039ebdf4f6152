"""The examples in these modules' docstrings run as part of the suite, so they cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "story_quality.training.union_model",
    "story_quality.metrics.gruen.redundancy",
    "story_quality.metrics.gruen.preprocessing",
    "story_quality.training.model_cards",
    "story_quality.training.train_cola",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False
    )
    assert result.attempted > 0, f"{name} has no docstring example left to run"
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed"
