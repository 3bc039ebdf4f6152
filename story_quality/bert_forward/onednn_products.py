"""fp32 linear layers on a CPU through oneDNN instead of torch's BLAS, and every private torch
entry point the project relies on, kept in this one module.

torch multiplies fp32 matrices on a CPU with its BLAS (MKL in the x86 wheels). On CPUs that are
not Intel's, MKL may take a narrower path than the CPU offers, where oneDNN, which torch also
ships, runs the same fp32 arithmetic at up to twice the rate (``benchmarks/RESULTS.md``). Inside
:func:`onednn_products` every fp32 ``F.linear`` on a CPU (the models' own ``nn.Linear`` layers
included) runs through oneDNN's ``torch.ops.mkldnn._linear_pointwise``; other products
(attention, ``Conv1D``'s ``addmm``) are unchanged.

``precision="fp32"`` on a CPU multiplies with whichever of the two libraries is faster here:
:func:`fp32_library` times both on a BERT-base layer's four products (about 0.3 s) and keeps
torch's BLAS unless oneDNN is clearly faster. The timings are kept on disk per machine and thread
count (:mod:`story_quality.machine_choices`): the first three processes add their best times, and
later ones read the settled choice without timing, so they multiply alike, the same bits from run
to run. The environment variable ``STORY_QUALITY_FP32_LIBRARY`` (``torch`` or ``onednn``) pins
it. ``"fp32-onednn"`` asks for oneDNN by name. The signature names the library that multiplied.

The two libraries add up a product's terms in different orders, so scores move by float rounding
(about 1e-7 on a probability). oneDNN's rows do not depend on how many other rows a product has
(from 2 rows on) nor on the thread count, so packing a batch (:mod:`story_quality.bert_forward.packed_layers`)
stays exact under it. Both were measured on x86 CPUs, so other CPUs refuse it.

oneDNN multiplies by a weight in its own blocked layout. Given a plain weight it lays it out again
on every product; :func:`onednn_linear` instead lays each weight out once, on its first product of
two rows or more, and keeps that copy while the weight lives (one more copy of each linear layer's
weights in memory, also after the scoring call). Those products have the same bits either way (a
single row, a matrix-vector product, would not, so it takes the plain weight), a few per cent
faster. A weight changed in place where torch does not count it (through ``.data``, or an
inference tensor) keeps its old layout: :func:`forget_layouts` drops them.

Code that sends its own products to oneDNN (the packed layers) runs under :func:`own_routing`:
the mode hands every torch call, down to a tensor's ``shape``, to Python first (some 65,000 calls,
about 0.3 s of a GRUEN call), and there it skips that detour.

The private entry points (:data:`PRIVATE_OPS`, :data:`PRIVATE_CPU_CHECKS`,
:data:`PRIVATE_DISPATCH_SWITCH`, a tensor's ``_base`` and ``_version``) are used here and nowhere else; ``tests/bert_forward/test_onednn_products.py`` fails
by name when a torch upgrade moves one.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import platform
import threading
import time
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from story_quality.machine_choices import cpu_name, keep_choice, kept_choice
from story_quality.versions import package_version

# Per thread, as torch keeps its function modes: the packed layers' own products follow the flag,
# the models' ``F.linear`` the mode, and the two must agree.
_STATE = threading.local()

# Each weight's oneDNN layout, keyed by the weight itself (dropped with it), beside the stamp it was
# made from: the weight's storage and, where torch counts them, its in-place changes.
_LAYOUTS: WeakIdKeyDictionary = WeakIdKeyDictionary()
# The row count oneDNN is told to expect when it lays a weight out: a product of any row count
# takes the layout, with the same bits as from the plain weight (tests check both).
LAYOUT_ROWS = 1024
# torch's private operators and CPU checks this module calls.
PRIVATE_OPS = ("_linear_pointwise", "_reorder_linear_weight")
PRIVATE_CPU_CHECKS = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
# torch's private context that turns off every ``__torch_function__`` (the mode included) for a while.
PRIVATE_DISPATCH_SWITCH = "DisableTorchFunction"
# The products fp32_library times, as (rows, inner width, outputs): a BERT-base layer's fused
# query/key/value, attention output and feed-forward on a short batch. The libraries' rates differ
# by shape: on an AVX2 AMD EPYC the square 768-wide product alone tied (so the choice was noise),
# while oneDNN took the wide ones 1.2x-1.4x faster and a whole GRUEN call 6-10 % faster.
PROBE_SHAPES = ((128, 768, 2304), (128, 768, 768), (128, 768, 3072), (128, 3072, 768))
PROBE_ROUNDS = 3
# oneDNN must beat torch's BLAS by this factor before fp32 leaves the BLAS, so that two libraries
# running alike do not swap places (and signatures) on timing noise.
PROBE_MARGIN = 1.1
# Pins fp32's CPU library instead of timing it: "torch" or "onednn".
FP32_LIBRARY_VARIABLE = "STORY_QUALITY_FP32_LIBRARY"
FP32_LIBRARIES = ("torch", "onednn")
# The name fp32's timings are kept under for later processes (story_quality.machine_choices), and
# how many processes add their best timings before the choice settles: one process's timing alone
# chose wrongly on a shared AVX2 EPYC 1 time in 6 (its oneDNN 1.07x the BLAS, against 1.2-1.45x in
# the others), and kept, that would have held for good.
FP32_CHOICE = "fp32-library"
PROBES_KEPT = 3


def onednn_refusal(device: torch.device) -> str | None:
    """Why ``device`` cannot run fp32 products through oneDNN (None: it can)."""
    if device.type != "cpu":
        return f"oneDNN's fp32 products are for CPU scoring, not {device.type}"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"its exactness was measured on x86 CPUs only, not on {platform.machine()}"
    if not (
        torch.backends.mkldnn.is_available() and all(hasattr(torch.ops.mkldnn, op) for op in PRIVATE_OPS)
    ):
        return f"this torch build ({torch.__version__}) has no oneDNN linear layer"
    return None


def cpu_bf16_kernels() -> bool:
    """True when torch finds AMX tiles or AVX-512 BF16 on this CPU (its private checks)."""
    return any(getattr(torch.cpu, check, lambda: False)() for check in PRIVATE_CPU_CHECKS)


def fp32_library(device: torch.device) -> str:
    """The library ``precision="fp32"`` multiplies with on ``device``: ``"onednn"`` on a CPU where
    oneDNN is clearly faster than torch's BLAS (timed by a machine's first processes at each thread
    count, then kept), else ``"torch"`` (torch's own products: its BLAS on a CPU, cuBLAS on a GPU).
    The environment variable :data:`FP32_LIBRARY_VARIABLE` set to ``torch`` or ``onednn`` pins the
    choice instead."""
    if onednn_refusal(device) is not None:
        return "torch"
    pinned = os.environ.get(FP32_LIBRARY_VARIABLE, "")
    if pinned:
        if pinned not in FP32_LIBRARIES:
            raise ValueError(
                f"{FP32_LIBRARY_VARIABLE} must be one of {list(FP32_LIBRARIES)}, got {pinned!r}."
            )
        return pinned
    return _timed_library(torch.get_num_threads())


@functools.cache
def _timed_library(threads: int) -> str:
    """:func:`faster_library` at ``threads`` threads, of the best timings this machine's processes
    kept (:mod:`story_quality.machine_choices`, keyed by the CPU, torch, this package and
    ``threads``): the first :data:`PROBES_KEPT` processes time the products and add their bests,
    later ones read the kept bests without timing."""
    key = _choice_key(threads)
    kept = _kept_timings(key)
    if kept is not None and kept["probes"] >= PROBES_KEPT:
        return faster_library(kept["torch"], kept["onednn"])
    blas, onednn = probe_seconds()
    if kept is not None:
        blas, onednn = min(blas, kept["torch"]), min(onednn, kept["onednn"])
    probes = 1 + (kept["probes"] if kept is not None else 0)
    keep_choice(FP32_CHOICE, key, {"torch": blas, "onednn": onednn, "probes": probes})
    return faster_library(blas, onednn)


def kept_fp32_library(threads: int) -> str | None:
    """The library fp32 takes at ``threads`` threads from this machine's kept timings once they are
    settled (:data:`PROBES_KEPT` processes timed), or None while a process still times it."""
    kept = _kept_timings(_choice_key(threads))
    settled = kept is not None and kept["probes"] >= PROBES_KEPT
    return faster_library(kept["torch"], kept["onednn"]) if settled else None


def _kept_timings(key: str) -> dict | None:
    """The kept best timings for ``key``: ``{"torch": s, "onednn": s, "probes": n}``, or None (none
    kept, or not that shape)."""
    kept = kept_choice(FP32_CHOICE, key)
    if not isinstance(kept, dict) or not isinstance(kept.get("probes"), int) or kept["probes"] < 1:
        return None
    times = [kept.get(library) for library in FP32_LIBRARIES]
    usable = all(isinstance(t, int | float) and 0 < t < math.inf for t in times)
    return kept if usable else None


def _choice_key(threads: int) -> str:
    return f"{cpu_name()} | torch {torch.__version__} | story_quality {package_version()} | {threads} threads"


def faster_library(blas_seconds: float, onednn_seconds: float) -> str:
    """``"onednn"`` when its product took :data:`PROBE_MARGIN` times less than the BLAS's, else ``"torch"``.

    >>> faster_library(1.0, 0.5), faster_library(1.0, 0.95)
    ('onednn', 'torch')
    """
    return "onednn" if onednn_seconds * PROBE_MARGIN < blas_seconds else "torch"


def probe_seconds() -> tuple[float, float]:
    """The time of :data:`PROBE_SHAPES`' products in torch's BLAS and in oneDNN (from the kept
    layouts, as the metrics run them): each product's best of :data:`PROBE_ROUNDS` timings, summed
    over the shapes."""
    generator = torch.Generator().manual_seed(0)
    totals = [0.0, 0.0]
    for rows, inner, outputs in PROBE_SHAPES:
        hidden = torch.randn(rows, inner, generator=generator)
        weight = torch.randn(outputs, inner, generator=generator)
        totals = [total + best for total, best in zip(totals, _best_seconds(hidden, weight), strict=True)]
    return totals[0], totals[1]


def _best_seconds(hidden: torch.Tensor, weight: torch.Tensor) -> list[float]:
    """The best of :data:`PROBE_ROUNDS` timings of ``hidden @ weight.t()`` by torch's BLAS and by
    oneDNN, taken in turns after one warm-up each."""
    products = (lambda: torch.mm(hidden, weight.t()), lambda: onednn_linear(hidden, weight, None))
    best = [math.inf, math.inf]
    with torch.inference_mode():
        for product in products:
            product()
        for _ in range(PROBE_ROUNDS):
            for which, product in enumerate(products):
                start = time.perf_counter()
                product()
                best[which] = min(best[which], time.perf_counter() - start)
    return best


def onednn_active() -> bool:
    """Whether this thread's products run through oneDNN."""
    return getattr(_STATE, "active", False)


def routes_to_onednn(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> bool:
    """Whether ``F.linear(hidden, weight, bias)`` runs through oneDNN here: inside
    :func:`onednn_products`, on a product :func:`_takes` accepts."""
    return onednn_active() and _takes(hidden, weight, bias)


def onednn_linear(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``F.linear(hidden, weight, bias)`` computed by oneDNN, from the weight's kept layout where the
    product has two rows or more (a single row rounds differently from the layout)."""
    rows = hidden.numel() // max(1, hidden.shape[-1])
    kept = laid_out(weight) if rows >= 2 else weight
    return torch.ops.mkldnn._linear_pointwise(hidden, kept, bias, "none", [], "")


def forget_layouts() -> None:
    """Drop every kept layout: after changing weights in place where torch does not count it."""
    _LAYOUTS.clear()


def laid_out(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` in oneDNN's layout, made on first use and kept while ``weight`` lives and is
    unchanged; a view (of part of a storage) or a non-contiguous weight as it is: a view is often
    made per product, and laying it out would cost about as much as the product it serves."""
    whole = weight.untyped_storage().nbytes() == weight.numel() * weight.element_size()
    if weight._base is not None or not whole or not weight.is_contiguous():
        return weight
    stamp = (weight.data_ptr(), None if weight.is_inference() else weight._version)
    kept = _LAYOUTS.get(weight)
    if kept is None or kept[0] != stamp:
        kept = (stamp, _lay_out(weight))
        _LAYOUTS[weight] = kept
    return kept[1]


def _lay_out(weight: torch.Tensor) -> torch.Tensor:
    """A copy of ``weight`` in oneDNN's layout for products of about :data:`LAYOUT_ROWS` rows."""
    return torch.ops.mkldnn._reorder_linear_weight(weight, LAYOUT_ROWS)


def _takes(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> bool:
    """An fp32 product on a CPU outside autocast, with nothing to differentiate, a matrix of weights
    and no bias or a whole one: oneDNN reads a bias as contiguous and one per output, so a strided,
    broadcast or scalar bias is left to torch."""
    tensors = [hidden, weight] + ([] if bias is None else [bias])
    whole_bias = bias is None or (bias.dim() == 1 and bias.is_contiguous() and len(bias) == weight.shape[0])
    return (
        weight.dim() == 2
        and hidden.dim() >= 1
        and hidden.shape[-1] == weight.shape[1]  # a mismatch gets torch's own error
        and whole_bias
        and all(t.device.type == "cpu" and t.dtype == torch.float32 for t in tensors)
        and not torch.is_autocast_enabled("cpu")
        and not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))
    )


class _OneDNNLinear(TorchFunctionMode):
    """Sends ``F.linear`` to oneDNN where :func:`_takes` allows; every other call as it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear:
            given = dict(zip(("input", "weight", "bias"), args, strict=False)) | kwargs
            hidden, weight, bias = given.get("input"), given.get("weight"), given.get("bias")
            if hidden is not None and weight is not None and _takes(hidden, weight, bias):
                return onednn_linear(hidden, weight, bias)
        return func(*args, **kwargs)


@contextlib.contextmanager
def onednn_products() -> Iterator[None]:
    """The context in which fp32 ``F.linear`` on a CPU runs through oneDNN."""
    outer = onednn_active()
    _STATE.active = True
    try:
        with _OneDNNLinear():
            yield
    finally:
        _STATE.active = outer


@contextlib.contextmanager
def own_routing() -> Iterator[None]:
    """For code that routes its own products (:func:`routes_to_onednn`, :func:`onednn_linear`): inside
    :func:`onednn_products`, its torch calls skip the mode's Python dispatch, the flag staying on;
    an ``F.linear`` called in here is not routed. Outside the context, nothing changes."""
    if not onednn_active():
        yield
        return
    with getattr(torch._C, PRIVATE_DISPATCH_SWITCH)():
        yield
