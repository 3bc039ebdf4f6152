"""precision="fp32-onednn": a CPU's fp32 linear layers multiplied by oneDNN, exact where packing needs it."""

from __future__ import annotations

import gc
import json
import threading
import weakref

import pytest
import torch
import torch.nn.functional as F

from story_quality import machine_choices, precision
from story_quality.bert_forward import onednn_products
from story_quality.bert_forward.onednn_products import onednn_active, onednn_linear
from story_quality.bert_forward.onednn_products import onednn_products as products

pytestmark = pytest.mark.skipif(
    onednn_products.onednn_refusal(torch.device("cpu")) is not None, reason="torch without oneDNN"
)


def test_linear_layers_run_through_onednn_inside_the_context_only(onednn_calls):
    layer = torch.nn.Linear(48, 24).eval()
    hidden = torch.randn(3, 7, 48)
    with torch.inference_mode():
        blas = layer(hidden)
        with products():
            assert onednn_active()
            inside = layer(hidden)
            without_bias = F.linear(hidden, layer.weight)
            by_keyword = F.linear(input=hidden, weight=layer.weight, bias=layer.bias)
            mixed = F.linear(hidden, weight=layer.weight)
            with products():  # nested: still on inside, and after the inner one ends
                assert onednn_active()
            assert onednn_active()
        assert not onednn_active()
        after = layer(hidden)
    assert onednn_calls == [(21, 24)] * 4
    # the direct call's product: equal bits where oneDNN multiplies both alike (AVX-512); on an AVX2
    # CPU the context's blocked weight layout rounds apart, by float rounding only
    torch.testing.assert_close(inside, onednn_linear(hidden, layer.weight, layer.bias), rtol=1e-6, atol=1e-6)
    assert torch.equal(by_keyword, inside) and torch.equal(mixed, without_bias)
    torch.testing.assert_close(inside, blas)
    torch.testing.assert_close(without_bias, hidden @ layer.weight.t())
    assert torch.equal(after, blas)


@pytest.mark.parametrize(
    "bias",
    [
        torch.arange(16.0)[::2],  # strided
        torch.tensor(1.5).expand(8),  # broadcast
        torch.tensor(2.0),  # a scalar
        torch.tensor([3.0]),  # one for all
    ],
    ids=["strided", "expanded", "scalar", "one"],
)
def test_a_bias_onednn_would_misread_is_left_to_torch(onednn_calls, bias):
    hidden, weight = torch.randn(5, 4), torch.randn(8, 4)
    with torch.inference_mode(), products():
        got = F.linear(hidden, weight, bias)
    assert onednn_calls == []
    assert torch.equal(got, F.linear(hidden, weight, bias))


def test_a_product_of_the_wrong_shape_gets_torchs_own_error(onednn_calls):
    with products(), pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(torch.randn(5, 4), torch.randn(8, 3))
    assert onednn_calls == []


@pytest.mark.parametrize("case", ["float64", "autocast", "gradient"])
def test_other_products_are_left_to_torch(onednn_calls, case):
    """Each case alone: only the gradient case has a gradient to keep."""
    calls = onednn_calls
    layer = torch.nn.Linear(16, 8)
    hidden = torch.randn(4, 16, dtype=torch.float64 if case == "float64" else torch.float32)
    if case == "float64":
        layer = layer.double()
    with (
        products(),
        torch.autocast("cpu", dtype=torch.bfloat16, enabled=case == "autocast"),
        torch.inference_mode(case != "gradient"),
    ):
        out = layer(hidden)
    assert calls == []
    if case == "gradient":
        out.sum().backward()  # oneDNN's op would have no gradient to give
        assert layer.weight.grad is not None


@pytest.mark.parametrize(("inner", "width"), [(768, 2304), (3072, 768), (64, 192)])
def test_a_row_does_not_depend_on_the_other_rows_from_two_rows_on(inner, width):
    """What packing a batch needs of the products: a row computed among any other rows (two or
    more) and at any thread count has the same bits."""
    torch.manual_seed(0)
    hidden, weight, bias = torch.randn(600, inner), torch.randn(width, inner) / 30, torch.randn(width)
    whole = onednn_linear(hidden, weight, bias)
    assert torch.equal(whole, _plain(hidden, weight, bias)), "the kept layout changes no bit"
    for rows, start in [(2, 0), (3, 5), (11, 100), (12, 7), (63, 301), (64, 0), (299, 300)]:
        assert torch.equal(
            onednn_linear(hidden[start : start + rows], weight, bias), whole[start : start + rows]
        )
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.equal(onednn_linear(hidden, weight, bias), whole)
    finally:
        torch.set_num_threads(threads)


def test_the_flag_is_per_thread_as_torchs_modes_are():
    seen: list[bool] = []
    with products():
        thread = threading.Thread(target=lambda: seen.append(onednn_active()))
        thread.start()
        thread.join()
    assert seen == [False]


def test_it_is_refused_off_the_cpu_and_without_onednn_by_name(monkeypatch):
    with pytest.raises(
        ValueError, match=r'precision="fp32-onednn" is refused: .* not cuda\. Use precision="fp32"'
    ):
        precision.check_precision("fp32-onednn", torch.device("cuda"))
    assert precision.check_precision("fp32-onednn", torch.device("cpu")) == "fp32-onednn"
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    with pytest.raises(ValueError, match="has no oneDNN linear layer"):
        precision.check_precision("fp32-onednn", torch.device("cpu"))
    monkeypatch.setattr(onednn_products.platform, "machine", lambda: "aarch64")
    with pytest.raises(ValueError, match="measured on x86 CPUs only, not on aarch64"):
        precision.check_precision("fp32-onednn", torch.device("cpu"))


def test_the_precision_context_is_the_onednn_one():
    with precision.autocast("fp32-onednn", torch.device("cpu")):
        assert onednn_active()
    with precision.autocast("fp32", torch.device("cpu")):
        assert not onednn_active()


def _plain(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """oneDNN's product from the weight as it is, laid out anew by oneDNN for this product alone."""
    return torch.ops.mkldnn._linear_pointwise(hidden, weight, bias, "none", [], "")


def test_each_weight_is_laid_out_once_and_anew_when_it_changes(monkeypatch):
    made: list[tuple[int, ...]] = []
    lay_out = onednn_products._lay_out
    monkeypatch.setattr(
        onednn_products, "_lay_out", lambda weight: made.append(weight.shape) or lay_out(weight)
    )
    torch.manual_seed(0)
    layer = torch.nn.Linear(96, 40)
    hidden = torch.randn(130, 96)
    with torch.inference_mode():
        first = onednn_linear(hidden, layer.weight, layer.bias)
        assert torch.equal(onednn_linear(hidden, layer.weight, layer.bias), first)
        assert made == [(40, 96)]
        assert torch.equal(first, _plain(hidden, layer.weight, layer.bias))
    with torch.no_grad():
        layer.weight.mul_(2)  # changed in place: its version moves on
    with torch.inference_mode():
        assert torch.equal(
            onednn_linear(hidden, layer.weight, layer.bias), _plain(hidden, layer.weight, layer.bias)
        )
        assert len(made) == 2
    layer.weight.data = torch.randn(40, 96)  # new storage, the same parameter
    with torch.inference_mode():
        assert torch.equal(
            onednn_linear(hidden, layer.weight, layer.bias), _plain(hidden, layer.weight, layer.bias)
        )
        assert len(made) == 3
        view = layer.weight[:24]
        assert torch.equal(
            onednn_linear(hidden, view, layer.bias[:24]), _plain(hidden, view, layer.bias[:24])
        )
        assert len(made) == 3, "a view is multiplied as it is"
        made_here = torch.randn(40, 96)  # an inference tensor: no version counter
        assert made_here.is_inference()
        assert torch.equal(onednn_linear(hidden, made_here, None), _plain(hidden, made_here, None))
        assert len(made) == 4
        # Inside inference mode a view of an inference tensor has no ``_base``: still a view.
        for part in (made_here[:24], made_here[16:]):
            assert torch.equal(onednn_linear(hidden, part, None), _plain(hidden, part, None))
        assert len(made) == 4, "a view of an inference tensor is multiplied as it is"
        onednn_products.forget_layouts()
        onednn_linear(hidden, made_here, None)
        assert len(made) == 5


@pytest.mark.parametrize("shape", [(1, 96), (96,), (1, 1, 96)], ids=["one-row", "vector", "one-row-3d"])
def test_a_single_row_takes_the_plain_weight(monkeypatch, shape):
    """A matrix-vector product rounds differently from the kept layout: it keeps oneDNN's result
    from the plain weight, as before layouts were kept."""
    made: list[int] = []
    lay_out = onednn_products._lay_out
    monkeypatch.setattr(onednn_products, "_lay_out", lambda weight: made.append(1) or lay_out(weight))
    torch.manual_seed(3)
    weight, bias, hidden = torch.randn(40, 96), torch.randn(40), torch.randn(*shape)
    with torch.inference_mode():
        assert torch.equal(onednn_linear(hidden, weight, bias), _plain(hidden, weight, bias))
    assert made == []


def test_a_layout_is_dropped_with_its_weight():
    weight = torch.randn(8, 16)
    with torch.inference_mode():
        onednn_linear(torch.randn(4, 16), weight, None)
    layout = weakref.ref(onednn_products._LAYOUTS[weight][1])
    gc.collect()
    assert layout() is not None
    del weight
    gc.collect()
    assert layout() is None


@pytest.fixture
def timed(monkeypatch, tmp_path):
    """fp32's library chosen by timing (the suite pins it), from the timings a test gives, with no
    choice kept by an earlier test."""
    monkeypatch.delenv(onednn_products.FP32_LIBRARY_VARIABLE)
    monkeypatch.setenv(machine_choices.CACHE_VARIABLE, str(tmp_path / "cache"))
    onednn_products._timed_library.cache_clear()
    calls: list[int] = []

    def given(seconds: tuple[float, float]) -> None:
        def probe() -> tuple[float, float]:
            calls.append(torch.get_num_threads())
            return seconds

        monkeypatch.setattr(onednn_products, "probe_seconds", probe)

    yield given, calls
    onednn_products._timed_library.cache_clear()


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [((1.0, 0.5), "fp32-onednn"), ((1.0, 0.95), "fp32"), ((0.5, 1.0), "fp32")],
    ids=["onednn-faster", "within-the-margin", "blas-faster"],
)
def test_fp32_takes_onednn_only_where_it_is_clearly_faster(timed, seconds, expected):
    given, calls = timed
    given(seconds)
    assert precision.check_precision("fp32", torch.device("cpu")) == expected
    assert precision.check_precision("fp32", torch.device("cpu")) == expected
    assert calls == [torch.get_num_threads()], "timed once per thread count"
    assert precision.check_precision("fp32", torch.device("cuda")) == "fp32"  # a GPU keeps its own


def test_the_timing_is_taken_anew_at_another_thread_count(timed):
    given, calls = timed
    given((1.0, 0.5))
    threads = torch.get_num_threads()
    try:
        precision.check_precision("fp32", torch.device("cpu"))
        torch.set_num_threads(1 if threads > 1 else 2)
        precision.check_precision("fp32", torch.device("cpu"))
    finally:
        torch.set_num_threads(threads)
    assert len(calls) == 2 and calls[0] != calls[1]


def _new_process() -> None:
    onednn_products._timed_library.cache_clear()


def test_the_first_processes_add_their_best_timings_and_later_ones_read_the_settled_choice(
    timed, tmp_path, monkeypatch
):
    given, calls = timed
    threads = torch.get_num_threads()
    given((1.0, 0.95))  # one process's timing: oneDNN within the margin
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32"
    assert onednn_products.kept_fp32_library(threads) is None  # not settled yet
    _new_process()
    given((1.2, 0.7))  # another: the bests so far are 1.0 against 0.7
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn"
    for _ in range(onednn_products.PROBES_KEPT - 2):
        _new_process()
        given((0.9, 2.0))  # a slow spell of oneDNN's: its best stays 0.7
        assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn"
    assert len(calls) == onednn_products.PROBES_KEPT
    assert onednn_products.kept_fp32_library(threads) == "onednn"
    _new_process()
    given((0.1, 5.0))  # would choose torch's BLAS, but no process times any more
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn"
    assert len(calls) == onednn_products.PROBES_KEPT
    assert list((tmp_path / "cache").iterdir()) == [tmp_path / "cache" / "fp32-library.json"]
    _new_process()  # another release of this package times anew
    monkeypatch.setattr(onednn_products, "package_version", lambda: "99.0")
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32"
    assert len(calls) == onednn_products.PROBES_KEPT + 1


@pytest.mark.parametrize(
    "kept",
    ['{"a": ', '["onednn"]', '"onednn"', '{"torch": 0.1, "onednn": 0.05}', '{"torch": 0.1, "onednn": -1, "probes": 9}',
     '{"torch": 0.1, "onednn": "fast", "probes": 9}', '{"torch": 0.1, "onednn": 0.05, "probes": 0}'],
    ids=["cut", "not-a-table", "a-bare-choice", "no-count", "negative", "not-a-time", "no-probes"],
)  # fmt: skip
def test_damaged_or_unknown_kept_timings_are_timed_again_and_replaced(timed, tmp_path, kept):
    given, calls = timed
    given((1.0, 0.5))
    (tmp_path / "cache").mkdir()
    kept_file = tmp_path / "cache" / "fp32-library.json"
    key = onednn_products._choice_key(torch.get_num_threads())
    kept_file.write_text(kept if kept.startswith('{"a"') else f'{{"{key}": {kept}}}')
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn" and len(calls) == 1
    assert json.loads(kept_file.read_text()) == {key: {"torch": 1.0, "onednn": 0.5, "probes": 1}}


def test_a_cache_that_cannot_be_written_still_chooses(timed, tmp_path, monkeypatch):
    given, calls = timed
    given((1.0, 0.5))
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(machine_choices.CACHE_VARIABLE, str(tmp_path / "a-file" / "cache"))
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn"
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn" and len(calls) == 1


def test_the_environment_pins_the_library_and_a_wrong_value_is_named(monkeypatch):
    monkeypatch.setenv(onednn_products.FP32_LIBRARY_VARIABLE, "onednn")
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32-onednn"
    monkeypatch.setenv(onednn_products.FP32_LIBRARY_VARIABLE, "torch")
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32"
    monkeypatch.setenv(onednn_products.FP32_LIBRARY_VARIABLE, "mkl")
    with pytest.raises(
        ValueError, match=r"STORY_QUALITY_FP32_LIBRARY must be one of \['torch', 'onednn'\], got 'mkl'"
    ):
        precision.check_precision("fp32", torch.device("cpu"))


def test_the_real_timing_gives_two_positive_times_and_a_library():
    blas, onednn = onednn_products.probe_seconds()
    assert 0 < blas < 5 and 0 < onednn < 5
    assert onednn_products.faster_library(blas, onednn) in onednn_products.FP32_LIBRARIES


def test_the_timing_covers_a_whole_bert_layer_in_both_libraries(monkeypatch):
    """The square product alone tied on a CPU where oneDNN took the wide ones 1.2x-1.4x faster:
    every product shape of a BERT-base layer is timed (in both libraries), and the times are summed."""
    timed: list[tuple[int, int, int]] = []

    def best(hidden: torch.Tensor, weight: torch.Tensor) -> list[float]:
        timed.append((hidden.shape[0], hidden.shape[1], weight.shape[0]))
        return [float(weight.shape[0]), 1.0]  # the BLAS's "time" is the width, oneDNN's 1

    monkeypatch.setattr(onednn_products, "_best_seconds", best)
    blas, onednn = onednn_products.probe_seconds()
    assert {(inner, outputs) for _, inner, outputs in timed} == {
        (768, 2304),
        (768, 768),
        (768, 3072),
        (3072, 768),
    }
    assert timed == list(onednn_products.PROBE_SHAPES)
    assert (blas, onednn) == (2304 + 768 + 3072 + 768, 4)


def test_one_probe_product_is_timed_in_both_libraries(onednn_calls):
    blas_and_onednn = onednn_products._best_seconds(torch.randn(16, 8), torch.randn(24, 8))
    assert len(blas_and_onednn) == 2 and all(0 < seconds < 1 for seconds in blas_and_onednn)
    assert onednn_calls and all(call == (16, 24) for call in onednn_calls)
