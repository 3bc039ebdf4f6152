"""The cyclic garbage collector is off while a scorer works, and as it was before after."""

from __future__ import annotations

import gc

import pytest
from gruen_models import save_all
from tiny_models import save_union_checkpoint

from story_quality.collection_pause import collector_paused
from story_quality.gruen import GruenScorer, aspects
from story_quality.union import UnionScorer
from story_quality.union.normalization import ROC_STORIES


@pytest.fixture
def collector():
    """The collector's state before the test, set back after it."""
    was_enabled = gc.isenabled()
    yield
    gc.enable() if was_enabled else gc.disable()


@pytest.mark.parametrize("enabled_before", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after(collector, enabled_before):
    gc.enable() if enabled_before else gc.disable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner context does not turn it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled() == enabled_before


def test_the_collector_is_set_back_after_an_error(collector):
    gc.enable()
    with pytest.raises(RuntimeError, match="inside"), collector_paused():
        raise RuntimeError("inside")
    assert gc.isenabled()


def test_gruen_scores_with_the_collector_off(collector, tmp_path, monkeypatch):
    seen: list[bool] = []
    real = aspects.redundancy_score

    def recording(sentences):
        seen.append(gc.isenabled())
        return real(sentences)

    monkeypatch.setattr(aspects, "redundancy_score", recording)
    gc.enable()
    GruenScorer(**save_all(tmp_path)).score(["The dog went home. It was happy.", "I sat. I ate."])
    assert seen == [False, False] and gc.isenabled()


def test_union_scores_with_the_collector_off(collector, tmp_path, monkeypatch):
    scorer = UnionScorer(str(save_union_checkpoint(tmp_path / "roc", normalization=ROC_STORIES.to_dict())))
    seen: list[bool] = []
    real = scorer._encode

    def recording(texts, call):
        seen.append(gc.isenabled())
        return real(texts, call)

    monkeypatch.setattr(scorer, "_encode", recording)
    gc.enable()
    scores = scorer.score(["Ken went to the store. He bought milk.", "He was sad."]).scores
    assert len(scores) == 2 and seen == [False] and gc.isenabled()
