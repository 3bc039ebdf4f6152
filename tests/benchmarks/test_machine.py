"""The matmul peaks the speed benchmarks measure their shares against."""

from __future__ import annotations

import itertools

import pytest
import torch

from benchmarks import machine
from story_quality.bert_forward.onednn_products import onednn_refusal


def test_a_peak_is_its_best_library_and_names_each():
    peak = machine.Peak({"torch": 215e9, "onednn": 470e9})
    assert peak.best == 470e9
    assert str(peak) == "470 GFLOP/s (torch's BLAS 215, oneDNN 470)"
    assert str(machine.Peak({"torch": 980e9})) == "980 GFLOP/s"


def test_fp32_on_a_cpu_is_measured_in_both_libraries_other_products_in_torchs():
    cpu = torch.device("cpu")
    both = ["torch"] + ([] if onednn_refusal(cpu) else ["onednn"])
    assert machine.matmul_libraries(cpu, torch.float32) == both
    assert machine.matmul_libraries(cpu, torch.bfloat16) == ["torch"]
    assert machine.matmul_libraries(torch.device("cuda"), torch.float32) == ["torch"]


def test_the_peak_beside_some_work_is_each_librarys_better_measurement(monkeypatch):
    """Before and after the work, library by library: a slow spell on one side costs nothing."""
    measured = itertools.chain([100.0, 300.0], [150.0, 250.0])
    monkeypatch.setattr(machine, "matmul_libraries", lambda device, dtype: ["torch", "onednn"])
    monkeypatch.setattr(machine, "matmul_peak_flops", lambda device, dtype, library: next(measured))
    result, peaks = machine.peaks_beside(lambda: "done", torch.device("cpu"))
    assert result == "done"
    assert peaks[torch.float32].by_library == {"torch": 150.0, "onednn": 300.0}


@pytest.mark.parametrize("library", ["torch", "onednn"])
def test_each_library_is_timed_on_its_own_products(onednn_calls, library):
    assert machine.matmul_peak_flops(torch.device("cpu"), seconds=0.01, library=library) > 0
    assert bool(onednn_calls) == (library == "onednn")
