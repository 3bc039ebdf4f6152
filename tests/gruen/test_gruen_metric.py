"""The ``gruen`` metric end to end through ``evaluate.load``: interface, invariances, bad input."""

from __future__ import annotations

import math

import evaluate
import pytest
import torch
from conftest import REPO
from gruen_models import directory_digest, save_all

from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen.grammaticality import cola_scores, reference_lm_scores
from story_quality.gruen.loading import load_model
from story_quality.gruen.sentences import text_to_sentences

TEXTS = [
    "The dog went home. It was very happy. Then the dog ate a big apple.",
    "She ran to the store with her friend.\n\nThey bought milk and it was 3.5 dollars!",
    "I went home. I went home. I went home.",
    "One",
    "My car was old. The weather was crisp and cool. He lost the school play. We ate.",
]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return save_all(tmp_path_factory.mktemp("gruen-metric-models"))


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(REPO / "metrics" / "gruen"))


def test_outputs_per_text_in_input_order(metric, paths):
    result = metric.compute(predictions=TEXTS, **paths)
    assert sorted(result) == [
        "coherence", "focus", "grammaticality", "gruen", "gruen_score", "mean_gruen", "redundancy", "scores",
        "signature",
    ]  # fmt: skip
    # the key style union shares, and the earlier names holding the same values
    assert result["scores"] == result["gruen"] and result["gruen_score"] == result["mean_gruen"]
    assert all(len(result[key]) == len(TEXTS) for key in ("gruen", "grammaticality", "redundancy", "focus"))
    assert result["coherence"] == [None] * len(TEXTS)
    assert result["redundancy"][2] == pytest.approx(-1.2)  # three identical pairs, 4 flags each
    assert result["mean_gruen"] == pytest.approx(sum(result["gruen"]) / len(TEXTS))
    for g, r, f, final in zip(
        result["grammaticality"], result["redundancy"], result["focus"], result["gruen"], strict=True
    ):
        assert final == pytest.approx(min(1.0, max(0.0, g + r + f)))


def test_grammaticality_combines_the_slow_lm_and_cola_terms_as_released(metric, paths):
    cpu = torch.device("cpu")
    lm, cola = (
        load_model("lm", CheckpointReference.parse(paths["lm_model"]), cpu),
        load_model("cola", CheckpointReference.parse(paths["cola_model"]), cpu),
    )
    expected = []
    for text in TEXTS[:2]:
        sentences = text_to_sentences(text)
        lm_value = sum(reference_lm_scores(lm, [s], 1)[0] for s in sentences) / len(sentences)
        cola_value = sum(cola_scores(cola, [s], 1)[0] for s in sentences) / len(sentences)
        expected.append(max(0.0, (math.exp(-0.5 * lm_value) + cola_value) / 8 + 0.5))
    result = metric.compute(predictions=TEXTS[:2], **paths)
    assert result["grammaticality"] == pytest.approx(expected, abs=1e-6)


def test_coherence_adds_minus_the_sop_loss(metric, paths):
    without = metric.compute(predictions=TEXTS, **paths)
    with_order = metric.compute(predictions=TEXTS, coherence=True, **paths)
    assert all(
        c < 0
        for c, sentences in zip(with_order["coherence"], TEXTS, strict=True)
        if len(text_to_sentences(sentences)) > 1
    )
    for base, c, final in zip(without["gruen"], with_order["coherence"], with_order["gruen"], strict=True):
        assert with_order["grammaticality"] == without["grammaticality"]
        assert final <= base + 1e-9 and final >= 0.0 and c <= 0.0


@pytest.mark.parametrize("lm_scoring", ["reference", "pll"])
def test_scores_do_not_depend_on_batch_size_order_or_companions(metric, paths, lm_scoring):
    base = metric.compute(predictions=TEXTS, batch_size=32, lm_scoring=lm_scoring, coherence=True, **paths)
    small = metric.compute(predictions=TEXTS, batch_size=1, lm_scoring=lm_scoring, coherence=True, **paths)
    order = list(reversed(range(len(TEXTS))))
    reordered = metric.compute(
        predictions=[TEXTS[i] for i in order], batch_size=3, lm_scoring=lm_scoring, coherence=True, **paths
    )
    alone = metric.compute(predictions=[TEXTS[0]], lm_scoring=lm_scoring, coherence=True, **paths)
    for key in ("gruen", "grammaticality", "redundancy", "focus", "coherence"):
        assert small[key] == pytest.approx(base[key], abs=1e-5)
        assert [reordered[key][order.index(i)] for i in range(len(TEXTS))] == pytest.approx(
            base[key], abs=1e-5
        )
        assert alone[key][0] == pytest.approx(base[key][0], abs=1e-5)


def test_pll_and_reference_scoring_differ_only_in_grammaticality(metric, paths):
    ref = metric.compute(predictions=TEXTS, **paths)
    pll = metric.compute(predictions=TEXTS, lm_scoring="pll", **paths)
    assert pll["redundancy"] == ref["redundancy"] and pll["focus"] == ref["focus"]
    assert pll["grammaticality"][0] != pytest.approx(ref["grammaticality"][0], abs=1e-6)


@pytest.mark.parametrize("blank", ["", "   \n\n  ", "One", "Hello!", "... !!"])
def test_texts_with_nothing_to_score_get_the_documented_zero(metric, paths, blank):
    result = metric.compute(predictions=[blank, TEXTS[0]], coherence=True, **paths)
    assert result["gruen"][0] == 0.0 and result["grammaticality"][0] == 0.0
    assert result["redundancy"][0] == 0.0 and result["focus"][0] == 0.0 and result["coherence"][0] == 0.0
    assert result["gruen"][1] == pytest.approx(
        metric.compute(predictions=[TEXTS[0]], coherence=True, **paths)["gruen"][0]
    )


def test_a_call_with_only_empty_texts_loads_no_model(metric):
    result = metric.compute(
        predictions=["", " ", "word"], lm_model="/nonexistent/lm", cola_model="/nonexistent/cola"
    )
    assert result["gruen"] == [0.0, 0.0, 0.0] and result["mean_gruen"] == 0.0


def test_an_empty_list_gives_empty_lists_and_a_nan_mean(metric):
    result = metric.compute(predictions=[], lm_model="/nonexistent/lm", cola_model="/nonexistent/cola")
    assert all(result[key] == [] for key in ("gruen", "grammaticality", "redundancy", "focus", "coherence"))
    assert math.isnan(result["mean_gruen"]) and math.isnan(result["gruen_score"]) and result["scores"] == []


@pytest.mark.parametrize(
    ("predictions", "message"),
    [
        (["Fine text here.", None], r"predictions\[1\] is None"),
        (["Fine text here.", "Another one.", 7], r"predictions\[2\] is a int, not a string: 7"),
        ("a single string", "list of strings"),
    ],
)
def test_bad_items_are_named(metric, paths, predictions, message):
    with pytest.raises((TypeError, ValueError), match=message):
        metric.compute(predictions=predictions, **paths)


def test_bad_options_are_refused(metric, paths):
    with pytest.raises(ValueError, match="lm_scoring"):
        metric.compute(predictions=TEXTS, lm_scoring="masked", **paths)
    with pytest.raises(ValueError, match="batch_size"):
        metric.compute(predictions=TEXTS, batch_size=0, **paths)
    with pytest.raises(OSError, match="CoLA classifier"):
        metric.compute(predictions=TEXTS, **{**paths, "cola_model": "/nonexistent/cola"})


def test_the_callers_list_is_left_untouched(metric, paths):
    texts = ["  The dog went home..\n\nIt ran 3.5 miles.  ", "x"]
    copy = list(texts)
    metric.compute(predictions=texts, **paths)
    assert texts == copy


def test_sentences_longer_than_the_window_and_very_long_texts(metric, paths):
    endless = " ".join(["the dog went home and then"] * 60)  # ~360 words, one sentence, window is 64
    story = " ".join(f"Day {i} the dog went to school with a friend and they played." for i in range(150))
    result = metric.compute(
        predictions=[endless, story], lm_scoring="pll", coherence=True, batch_size=16, **paths
    )
    assert all(0.0 <= g <= 1.0 for g in result["gruen"])
    assert all(math.isfinite(x) for key in ("grammaticality", "coherence") for x in result[key])


def test_models_are_loaded_once_and_reloaded_when_a_name_changes(metric, paths, tmp_path):
    metric.compute(predictions=TEXTS[:1], **paths)
    first = metric.scorer.models.get("lm", CheckpointReference.parse(paths["lm_model"]), torch.device("cpu"))
    metric.compute(predictions=TEXTS[1:2], **paths)
    assert (
        metric.scorer.models.get("lm", CheckpointReference.parse(paths["lm_model"]), torch.device("cpu"))
        is first
    )
    other = save_all(tmp_path)
    metric.compute(predictions=TEXTS[:1], **{**paths, "lm_model": other["lm_model"]})
    assert metric.scorer.models._entries["lm"][1] is not first


def test_loading_local_directories_writes_nothing_into_them(paths):
    import pathlib

    before = {role: directory_digest(pathlib.Path(p)) for role, p in paths.items()}
    fresh = evaluate.load(str(REPO / "metrics" / "gruen"))
    fresh.compute(predictions=TEXTS, coherence=True, **paths)
    assert {role: directory_digest(pathlib.Path(p)) for role, p in paths.items()} == before


def test_an_unreachable_default_names_the_model_its_pinned_commit_and_the_way_out(metric, paths):
    """Offline, each default fails with one error: which model, why, and how to pass a folder."""
    with pytest.raises(OSError) as caught:
        metric.compute(predictions=["The dog ran home."], cola_model=paths["cola_model"])
    message = str(caught.value)
    assert "masked LM (lm_model) from 'google-bert/bert-base-cased'" in message
    assert "lm_model='/path/to/folder'" in message
    with pytest.raises(OSError) as caught:
        metric.compute(predictions=["The dog ran home."], lm_model=paths["lm_model"])
    message = str(caught.value)
    assert "CoLA classifier (cola_model) from 'Apucs/bert-fine-tuned-cola'" in message
    assert "2e97c90a2abbf40f72a0bbcdb2a4fb8cc728f34c" in message  # the pinned commit
    assert "cola_model='/path/to/folder'" in message


def test_a_config_name_is_refused_pointing_at_the_model_options():
    with pytest.raises(ValueError, match=r"'org/x'.*lm_model=, cola_model= and sop_model= in compute"):
        evaluate.load(str(REPO / "metrics" / "gruen"), "org/x")
