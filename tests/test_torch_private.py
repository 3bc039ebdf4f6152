"""The private torch entry points the project calls live in bert_forward.onednn_products alone, and
each is still where that module calls it: a torch upgrade that moves one fails here, by name,
instead of silently sending every fp32 product back to torch's BLAS."""

from __future__ import annotations

import pathlib
import platform
import re

import pytest
import torch

from story_quality.bert_forward import onednn_products

LIBRARY = pathlib.Path(onednn_products.__file__).parents[1]  # story_quality/
X86 = platform.machine().lower() in ("x86_64", "amd64")
# What counts as reaching into torch's private parts in the library's source.
PRIVATE_USE = re.compile(
    r"torch\.ops\.mkldnn|_is_amx_tile_supported|_is_avx512_bf16_supported|\._version\b|\._base\b"
    r"|DisableTorchFunction|torch\._C\b"
)


@pytest.mark.skipif(not X86, reason="oneDNN's fp32 products are offered on x86 CPUs only")
@pytest.mark.parametrize("op", onednn_products.PRIVATE_OPS)
def test_each_private_onednn_operator_is_still_there(op):
    assert torch.backends.mkldnn.is_available(), f"torch {torch.__version__} was built without oneDNN"
    assert hasattr(torch.ops.mkldnn, op), f"torch {torch.__version__} moved torch.ops.mkldnn.{op}"
    assert onednn_products.onednn_refusal(torch.device("cpu")) is None


@pytest.mark.parametrize("check", onednn_products.PRIVATE_CPU_CHECKS)
def test_each_private_cpu_check_is_still_there(check):
    assert isinstance(getattr(torch.cpu, check)(), bool), f"torch {torch.__version__} moved torch.cpu.{check}"


def test_the_switch_that_turns_torch_function_modes_off_is_still_there():
    class Counting(torch.overrides.TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Counting.calls += 1
            return func(*args, **(kwargs or {}))

    switch = getattr(torch._C, onednn_products.PRIVATE_DISPATCH_SWITCH, None)
    assert switch is not None, (
        f"torch {torch.__version__} moved torch._C.{onednn_products.PRIVATE_DISPATCH_SWITCH}"
    )
    with Counting():
        torch.ones(2).add_(1)
        assert Counting.calls == 2
        with switch():
            torch.ones(2).add_(1)
        assert Counting.calls == 2, "the switch no longer turns a function mode off"


def test_a_tensors_version_and_base_are_still_there():
    weight = torch.zeros(3, 2)
    before = weight._version
    weight.add_(1)
    assert weight._version == before + 1 and weight._base is None and weight[1:]._base is weight


def test_no_other_library_module_uses_them():
    users = sorted(
        str(path.relative_to(LIBRARY.parent))
        for path in LIBRARY.rglob("*.py")
        if path != pathlib.Path(onednn_products.__file__)
        and PRIVATE_USE.search(path.read_text(encoding="utf-8"))
    )
    assert users == []
