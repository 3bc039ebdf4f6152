"""bench_gruen's procedures: each computes what the benchmark compares it with, on the device given."""

from __future__ import annotations

import gruen_models
import pytest
import torch
from transformers import BertForSequenceClassification

from benchmarks import bench_gruen

TEXTS = [
    "The dog went home. It was very happy. Then the dog ate a big apple.",
    "She ran to the store with her friend.\n\nThey bought milk and it was 3.5 dollars!",
    "My car was old. The weather was crisp and cool. He lost the school play. We ate.",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    # The release pads CoLA's input to 128 tokens: the tiny models get 128 positions.
    # With 128 positions the classifier's logits come out lower: its class-1 bias is raised so that
    # the grammaticality term stays inside [0, 1], where the scores tell the texts apart.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gruen_models, "MAX_LENGTH", 128)
        saved = gruen_models.save_all(tmp_path_factory.mktemp("gruen-bench"))
    cola = BertForSequenceClassification.from_pretrained(saved["cola_model"])
    with torch.no_grad():
        cola.classifier.bias[1] += 4.0
    cola.save_pretrained(saved["cola_model"])
    return {"lm_model": saved["lm_model"], "cola_model": saved["cola_model"]}


def test_the_release_re_creation_scores_as_reference_mode_does(models):
    release = bench_gruen.release_procedure(TEXTS, models, "cpu")
    ours = bench_gruen.metric_procedure(TEXTS, models, "reference", 2, "fp32", "cpu")
    assert len(release) == len(TEXTS)
    assert max(abs(a - b) for a, b in zip(release, ours, strict=True)) < 1e-6
    assert len(set(release)) > 1  # the texts are told apart, not all clipped to one value


def test_batched_pll_equals_one_mask_at_a_time(models):
    slow = bench_gruen.one_mask_at_a_time(TEXTS, models, "cpu")
    fast = bench_gruen.batched_pll(TEXTS, models, 4, "cpu")
    assert len(slow) == 9  # one score per sentence
    assert max(abs(a - b) for a, b in zip(slow, fast, strict=True)) < 1e-5


@pytest.mark.parametrize(
    "name, args",
    [
        ("release_procedure", ()),
        ("metric_procedure", ("reference", 2, "fp32")),
        ("one_mask_at_a_time", ()),
        ("batched_pll", (4,)),
    ],
)
def test_every_procedure_moves_its_models_to_the_device_it_is_given(models, monkeypatch, name, args):
    # "cpu:0" is a CPU all the same, so the procedure runs; a model left on plain "cpu" shows here.
    moved_to = []
    original = torch.nn.Module.to

    def recording_to(module, *to_args, **to_kwargs):
        target = to_kwargs.get("device", to_args[0] if to_args else None)
        if isinstance(target, (str, torch.device)):
            moved_to.append(str(target))
        return original(module, *to_args, **to_kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", recording_to)
    getattr(bench_gruen, name)(TEXTS[:1], models, *args, "cpu:0")
    assert moved_to and set(moved_to) == {"cpu:0"}


@pytest.mark.parametrize("library, routed", [("onednn", True), ("torch", False)])
def test_batched_pll_in_fp32_multiplies_in_the_library_the_metric_chose(models, monkeypatch, library, routed):
    # The metric turns "fp32" into the faster library's products (check_precision); the benchmark's
    # PLL row must time the same products, not torch's own whatever the choice.
    from story_quality.bert_forward import onednn_products
    from story_quality.gruen import grammaticality

    if library == "onednn" and onednn_products.onednn_refusal(torch.device("cpu")):
        pytest.skip("no oneDNN linear layer in this torch build")
    monkeypatch.setenv(onednn_products.FP32_LIBRARY_VARIABLE, library)
    seen = []

    def recording(loaded, sentences, batch_size):
        seen.append(onednn_products.onednn_active())
        return [0.0] * len(sentences)

    monkeypatch.setattr(grammaticality, "pll_nll_scores", recording)
    bench_gruen.batched_pll(TEXTS[:1], models, 4, "cpu")
    assert seen == [routed]
