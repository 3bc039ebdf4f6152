"""GruenScorer: the metric's scores are the scorer's; its models are named once and shared."""

from __future__ import annotations

import math
import pathlib

import evaluate
import pytest
import torch
import transformers
from gruen_models import save_all

from story_quality import metric_path, precision
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen import GruenScorer
from story_quality.gruen.checkpoints import COLA_CHECKPOINT, COLA_REVISION

TEXTS = [
    "The dog went home. It was very happy. Then the dog ate a big apple.",
    "I went home. I went home.",
    "   ",
    "She ran to the store with her friend. They bought milk.",
]


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, str]:
    return save_all(tmp_path_factory.mktemp("gruen-scorer-models"))


@pytest.mark.parametrize(
    "options", [{}, {"coherence": True, "batch_size": 2}, {"lm_scoring": "pll", "coherence": True}]
)
def test_the_metric_returns_the_scorers_result(paths, options):
    result = GruenScorer(**paths).score(TEXTS, **options)
    metric = evaluate.load(metric_path("gruen"))
    assert metric.compute(predictions=TEXTS, **paths, **options) == result.as_dict()
    assert result.scores[2] == 0.0 and len(set(result.scores)) == len(TEXTS)
    assert (result.coherence[0] is None) == (not options.get("coherence", False))


def test_an_empty_call_loads_no_model_and_has_no_mean():
    result = GruenScorer("/nonexistent/lm", "/nonexistent/cola").score([])
    assert result.scores == [] and math.isnan(result.mean) and result.signature.startswith("gruen|v")


def test_models_are_named_once_and_shared_by_a_scorer_of_other_models(paths, tmp_path):
    scorer = GruenScorer(**paths)
    assert (scorer.cola.source, scorer.cola.revision, scorer.cola.local) == (paths["cola_model"], None, True)
    assert (GruenScorer().cola.source, GruenScorer().cola.revision) == (
        COLA_CHECKPOINT,
        COLA_REVISION,
    )  # pinned
    assert scorer.with_models(**paths) is scorer
    scorer.score(TEXTS[:1])
    first = scorer.models.get("lm", CheckpointReference.parse(paths["lm_model"]), torch.device("cpu"))
    other = scorer.with_models(**{**paths, "cola_model": save_all(tmp_path)["cola_model"]})
    assert other is not scorer and other.models is scorer.models
    other.score(TEXTS[:1])
    assert other.models.get("lm", CheckpointReference.parse(paths["lm_model"]), torch.device("cpu")) is first


def test_model_names_and_options_are_checked(paths):
    with pytest.raises(TypeError, match="lm_model must be a non-empty string, got int 5"):
        GruenScorer(lm_model=5)
    with pytest.raises(TypeError, match="cola_revision must be a non-empty string"):
        GruenScorer(**paths, cola_revision=b"main")
    assert GruenScorer(lm_model=pathlib.Path(paths["lm_model"])).lm == CheckpointReference.parse(
        paths["lm_model"]
    )
    scorer = GruenScorer(**paths)
    with pytest.raises(TypeError, match="coherence must be True or False, got str 'false'"):
        scorer.score(TEXTS, coherence="false")
    with pytest.raises(ValueError, match="lm_scoring must be one of"):
        scorer.score(TEXTS, lm_scoring="masked")


def test_fp32_onednn_runs_every_model_product_through_onednn_and_says_so(paths, onednn_calls):
    scorer = GruenScorer(**paths)
    exact = scorer.score(TEXTS, coherence=True)
    fast = scorer.score(TEXTS, precision="fp32-onednn")  # the LM and CoLA alone
    vocabulary = transformers.AutoConfig.from_pretrained(paths["lm_model"]).vocab_size
    assert vocabulary in {outputs for _, outputs in onednn_calls}  # the LM head's vocabulary product
    assert 2 in {outputs for _, outputs in onednn_calls}  # CoLA's two classes
    fast = scorer.score(TEXTS, coherence=True, precision="fp32-onednn")
    assert fast.signature == exact.signature.replace("|fp32", "|fp32-onednn")
    assert fast.redundancy == exact.redundancy and fast.focus == exact.focus
    assert fast.scores == pytest.approx(exact.scores, abs=1e-5)


def test_bf16_runs_all_three_models_in_autocast_and_says_so(paths, monkeypatch):
    scorer = GruenScorer(**paths)
    exact = scorer.score(TEXTS, coherence=True)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)  # emulated where the CPU lacks it
    fast = scorer.score(TEXTS, coherence=True, precision="bf16")
    assert fast.signature == exact.signature.replace("|fp32", "|bf16-autocast")
    assert fast.redundancy == exact.redundancy and fast.focus == exact.focus  # no model products
    moved = [
        a != b
        for a, b in zip(
            fast.grammaticality + fast.coherence, exact.grammaticality + exact.coherence, strict=True
        )
    ]
    assert any(moved[:3]) and any(moved[4:7])  # grammaticality (LM, CoLA) and sentence order
    assert fast.scores == pytest.approx(exact.scores, abs=0.05)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    with pytest.raises(ValueError, match='precision="bf16" is refused'):
        scorer.score(TEXTS, precision="bf16")
