"""fp32 linear layers on a CPU through oneDNN instead of torch's BLAS: ``precision="fp32-onednn"``.

torch multiplies fp32 matrices on a CPU with its BLAS (MKL in the x86 wheels). On CPUs that are
not Intel's, MKL may take a narrower path than the CPU offers: on an AMD EPYC with AVX-512 (CPU
family 26) it multiplies at about 215 GFLOP/s on 2 cores, where oneDNN, which torch also ships,
reaches about 470 GFLOP/s in the same fp32 arithmetic. Inside :func:`onednn_products` every fp32
``F.linear`` on a CPU (the models' own ``nn.Linear`` layers included) runs through oneDNN's
``torch.ops.mkldnn._linear_pointwise``; other products (attention, ``Conv1D``'s ``addmm``) are
unchanged.

The two libraries add up a product's terms in different orders, so scores move by float rounding
(about 1e-7 on a probability). oneDNN's rows do not depend on how many other rows a product has
(from 2 rows on) nor on the thread count, so packing a batch (:mod:`story_quality.packed_bert`)
stays exact under it. Both were measured on x86 CPUs, so other CPUs refuse it.

oneDNN multiplies by a weight in its own blocked layout. Given a plain weight it lays it out again
on every product; :func:`onednn_linear` instead lays each weight out once, on its first product of
two rows or more, and keeps that copy while the weight lives (one more copy of each linear layer's
weights in memory, also after the scoring call). Those products have the same bits either way (a
single row, a matrix-vector product, would not, so it takes the plain weight); on the EPYC a
BERT-base product runs about 4 % faster. A weight changed in place where torch does not count it
(through ``.data``, or an inference tensor) keeps its old layout: :func:`forget_layouts` drops them.
"""

from __future__ import annotations

import contextlib
import platform
import threading
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

# Per thread, as torch keeps its function modes: the packed layers' own products follow the flag,
# the models' ``F.linear`` the mode, and the two must agree.
_STATE = threading.local()

# Each weight's oneDNN layout, keyed by the weight itself (dropped with it), beside the stamp it was
# made from: the weight's storage and, where torch counts them, its in-place changes.
_LAYOUTS: WeakIdKeyDictionary = WeakIdKeyDictionary()
# The row count oneDNN is told to expect when it lays a weight out: a product of any row count
# takes the layout, with the same bits as from the plain weight (tests check both).
LAYOUT_ROWS = 1024


def onednn_refusal(device: torch.device) -> str | None:
    """Why ``device`` cannot run fp32 products through oneDNN (None: it can)."""
    if device.type != "cpu":
        return f"oneDNN's fp32 products are for CPU scoring, not {device.type}"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"its exactness was measured on x86 CPUs only, not on {platform.machine()}"
    if not (
        torch.backends.mkldnn.is_available()
        and all(hasattr(torch.ops.mkldnn, op) for op in ("_linear_pointwise", "_reorder_linear_weight"))
    ):
        return f"this torch build ({torch.__version__}) has no oneDNN linear layer"
    return None


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
