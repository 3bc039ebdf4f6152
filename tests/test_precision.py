"""The precision option: fp32 by default, bf16 autocast only where the hardware multiplies bf16."""

from __future__ import annotations

import pytest
import torch

from story_quality import precision


def without_bf16(monkeypatch) -> None:
    for check in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        monkeypatch.setattr(torch.cpu, check, lambda: False, raising=False)


def test_a_cpu_without_bf16_refuses_it_by_name(monkeypatch):
    without_bf16(monkeypatch)
    monkeypatch.setattr(precision, "cpu_name", lambda: "Example CPU 9000")
    assert not precision.cpu_has_bf16()
    with pytest.raises(ValueError, match=r'precision="bf16" is refused: this CPU \(Example CPU 9000\)'):
        precision.check_precision("bf16", torch.device("cpu"))
    assert precision.check_precision("fp32", torch.device("cpu")) == "fp32"


@pytest.mark.parametrize("check", ["_is_amx_tile_supported", "_is_avx512_bf16_supported"])
def test_either_amx_or_avx512_bf16_is_enough(monkeypatch, check):
    without_bf16(monkeypatch)
    monkeypatch.setattr(torch.cpu, check, lambda: True)
    assert precision.check_precision("bf16", torch.device("cpu")) == "bf16"


def test_other_devices_are_refused_bf16_naming_them():
    with pytest.raises(ValueError, match="not on meta"):
        precision.check_precision("bf16", torch.device("meta"))


def test_fp32_runs_as_written_and_bf16_multiplies_in_bf16(monkeypatch):
    a = torch.randn(8, 8)
    with precision.autocast("fp32", torch.device("cpu")):
        assert (a @ a).dtype == torch.float32
    with precision.autocast("bf16", torch.device("cpu")):
        assert (a @ a).dtype == torch.bfloat16
