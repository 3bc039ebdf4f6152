"""The ``precision`` option, the arithmetic a metric scores in: ``fp32`` (the default),
``fp32-onednn`` on a CPU, or ``bf16`` autocast where the hardware has it.

``fp32`` multiplies on a CPU with the faster of torch's BLAS and oneDNN, timed by a machine's first
processes and kept (:func:`story_quality.bert_forward.onednn_products.fp32_library`);
``fp32-onednn`` asks for oneDNN by name.
Both are fp32 arithmetic: the libraries add a product's terms in different orders, so scores
differ by float rounding (about 1e-7), and the signature names the library that multiplied
(``fp32``: torch's own products; ``fp32-onednn``: oneDNN's). See
:mod:`story_quality.bert_forward.onednn_products`.

bf16 autocast runs the matrix products in bfloat16 and keeps the rest (normalisation, softmax,
the scores) in fp32. It is offered where bf16 products run natively: GPUs with bf16 arithmetic
and CPUs with AMX or AVX-512 BF16. Elsewhere bf16 is emulated, many times slower than fp32, so
it is refused by name. The signature records the precision a score was computed in.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from story_quality.machine_choices import cpu_name

if TYPE_CHECKING:
    import torch

PRECISIONS = ("fp32", "fp32-onednn", "bf16")
# How each precision is written in a signature (``bf16-autocast`` is what GPU scores always said).
SIGNATURE_LABELS = {"fp32": "fp32", "fp32-onednn": "fp32-onednn", "bf16": "bf16-autocast"}
# The labels of the two fp32 libraries: the same arithmetic, whose scores agree to 1e-6 (the bound
# a score's independence of the multiplying library is held to), so files of either join and compare.
FP32_LIBRARY_LABELS = ("fp32", "fp32-onednn")


def cpu_has_bf16() -> bool:
    """True when this CPU multiplies bf16 natively (AMX tiles or AVX-512 BF16), as torch detects it."""
    from story_quality.bert_forward.onednn_products import cpu_bf16_kernels

    return cpu_bf16_kernels()


def bf16_refusal(device: torch.device) -> str | None:
    """Why ``device`` cannot score in bf16 (None: it can)."""
    import torch

    if device.type == "cuda":
        if torch.cuda.is_bf16_supported(including_emulation=False):
            return None
        return f"the GPU {torch.cuda.get_device_name(device)} has no bf16 arithmetic"
    if device.type == "cpu":
        if cpu_has_bf16():
            return None
        return (
            f"this CPU ({cpu_name()}) has neither AMX nor AVX-512 BF16, so bf16 would be emulated, "
            "many times slower than fp32"
        )
    return f"bf16 scoring is offered on CPUs and CUDA GPUs, not on {device.type}"


def check_precision(precision: str, device: torch.device) -> str:
    """The precision a call computes in: ``precision`` (already one of :data:`PRECISIONS`) if ``device``
    can compute in it, else the error; ``fp32`` becomes ``fp32-onednn`` where oneDNN is the faster
    fp32 library on ``device``."""
    reason = None
    if precision == "fp32":
        from story_quality.bert_forward.onednn_products import fp32_library

        return "fp32-onednn" if fp32_library(device) == "onednn" else "fp32"
    if precision == "bf16":
        reason = bf16_refusal(device)
    elif precision == "fp32-onednn":
        from story_quality.bert_forward.onednn_products import onednn_refusal

        reason = onednn_refusal(device)
    if reason is not None:
        raise ValueError(f'precision="{precision}" is refused: {reason}. Use precision="fp32" (the default).')
    return precision


def autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """The context a forward pass runs in: nothing for fp32, oneDNN's linear layers for fp32-onednn,
    bf16 autocast on ``device`` for bf16."""
    if precision == "fp32":
        return contextlib.nullcontext()
    if precision == "fp32-onednn":
        from story_quality.bert_forward.onednn_products import onednn_products

        return onednn_products()
    import torch

    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
