"""The mutation check must keep applying to today's code.

``tests/mutation_check.py`` plants each bug by replacing an exact text; when the code moves on
(a refactor renames a variable) the text disappears and the check can no longer run. This
test fails at once on such drift, so the check is never found broken only when someone runs it.
"""

from __future__ import annotations

import pathlib

import mutation_check
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mutation", mutation_check.MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_still_applies_once(mutation):
    text = (REPO / mutation.path).read_text()
    assert text.count(mutation.old) == 1, f"{mutation.name}: its text is not found once in {mutation.path}"
    assert mutation.new != mutation.old


@pytest.mark.parametrize("mutation", mutation_check.MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_names_existing_tests(mutation):
    for target in mutation.tests:
        path, _, node = target.partition("::")
        assert (REPO / path).is_file(), f"{mutation.name}: no test file {path}"
        if node:
            assert f"def {node.split('[')[0]}(" in (REPO / path).read_text(), f"{mutation.name}: no {node}"


def test_mutation_names_are_unique():
    names = [m.name for m in mutation_check.MUTATIONS]
    assert len(names) == len(set(names))
