"""evaluate's own metric test, ``test_load`` of its ``tests/test_metric_common.py``, on both folders.

evaluate's tests are not installed (and need absl), so this runs their mechanism with the
functions of the installed ``evaluate`` they call, from the repository root as evaluate's CI does:
the metric module is imported through ``evaluate.loading.evaluation_module_factory("metrics/NAME")``,
its main class through ``import_main_class``; ``_compute`` may take no ``**kwargs``; then
``doctest.testmod`` runs every docstring example of the module (``ELLIPSIS_MARKER`` "[...]",
``raise_on_error``) with ``evaluate.load(NAME)`` redirected to ``metrics/NAME`` and the metric's
"intensive calls" patched, as evaluate patches bertscore's model loading. union needs no patch:
its examples load the shipped default. gruen's default models are Hub downloads, so its patcher
hands the metric tiny models built on the fly in their place.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import inspect
import os
import pathlib
import tempfile
from collections.abc import Callable, Iterator
from unittest.mock import patch

import evaluate
import pytest
from conftest import REPO
from gruen_models import save_all

from story_quality import METRICS

INTENSIVE_CALLS_PATCHER: dict[str, Callable[[str], contextlib.AbstractContextManager]] = {}


def register_intensive_calls_patcher(name: str) -> Callable:
    """Register a context manager that stands in for a metric's model downloads (evaluate's hook)."""

    def wrapper(patcher: Callable[[str], Iterator[None]]) -> Callable:
        INTENSIVE_CALLS_PATCHER[name] = contextlib.contextmanager(patcher)
        return INTENSIVE_CALLS_PATCHER[name]

    return wrapper


@register_intensive_calls_patcher("gruen")
def patch_gruen(module_name: str) -> Iterator[None]:
    """Every model GRUEN asks for (by role) is loaded from a tiny checkpoint folder instead."""
    from story_quality.checkpoints.reference import CheckpointReference
    from story_quality.gruen import loading

    real_load = loading.load_model
    with tempfile.TemporaryDirectory(prefix="gruen-tiny-") as root:
        tiny = save_all(pathlib.Path(root))

        def load_tiny(role, checkpoint, device):
            return real_load(role, CheckpointReference.parse(tiny[f"{role}_model"]), device)

        with patch("story_quality.gruen.loading.load_model", side_effect=load_tiny):
            yield


@contextlib.contextmanager
def patch_intensive_calls(name: str, module_name: str) -> Iterator[None]:
    with INTENSIVE_CALLS_PATCHER.get(name, contextlib.nullcontext)(module_name):
        yield


@contextlib.contextmanager
def use_local_metrics(module_type: str) -> Iterator[None]:
    """``evaluate.load("NAME", ...)`` in an example loads the folder ``metrics/NAME``."""
    real_load = evaluate.load

    def load_local_metric(name, *args, **kwargs):
        return real_load(os.path.join(module_type + "s", name), *args, **kwargs)

    with patch("evaluate.load", side_effect=load_local_metric):
        yield


def run_test_load(name: str, module_type: str = "metric") -> doctest.TestResults:
    """evaluate's ``LocalModuleTest.test_load`` for ``metrics/NAME``; run from the repository root."""
    module = importlib.import_module(
        evaluate.loading.evaluation_module_factory(
            os.path.join(module_type + "s", name), module_type=module_type
        ).module_path
    )
    main_class = evaluate.loading.import_main_class(module.__name__)
    parameters = inspect.signature(main_class._compute).parameters
    assert all(p.kind != p.VAR_KEYWORD for p in parameters.values()), "no **kwargs in _compute"
    with patch_intensive_calls(name, module.__name__), use_local_metrics(module_type):
        try:
            return doctest.testmod(module, verbose=True, raise_on_error=True)
        except doctest.UnexpectedException as error:
            raise error.exc_info[1] from None  # the exception an example raised, as evaluate re-raises it


@pytest.fixture
def evaluate_ci(monkeypatch):
    """evaluate's CI: the repository root as working folder and "[...]" as the ellipsis marker."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")
    evaluate.logging.disable_progress_bar()
    yield
    evaluate.logging.enable_progress_bar()


@pytest.mark.parametrize("name", METRICS)
def test_load(evaluate_ci, name):
    results = run_test_load(name)
    assert results.failed == 0
    assert results.attempted > 1


def test_an_example_that_needs_an_undefined_name_fails_the_harness(evaluate_ci, tmp_path, monkeypatch):
    """The NameError of an example that leans on a name only a project test defined surfaces."""
    folder = tmp_path / "metrics" / "needs_a_name"
    folder.mkdir(parents=True)
    script = (REPO / "metrics" / "union" / "union.py").read_text(encoding="utf-8")
    (folder / "needs_a_name.py").write_text(
        script.replace(
            'evaluate.load(metric_path("union"))', 'evaluate.load(metric_path("union"), checkpoint_dir)'
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NameError, match="checkpoint_dir"):
        run_test_load("needs_a_name")
