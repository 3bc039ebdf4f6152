"""Where a metric runs, and whether a loaded model can run at all: the checks that need torch.

:mod:`story_quality.options` resolves a ``device`` option through :func:`check_device`, importing
this module (and torch) only when a metric call does.
"""

from __future__ import annotations

from typing import Any

import torch


def check_device(device: Any) -> torch.device:
    """The device to run on (None: the first GPU, else the CPU), refused when it does not exist here."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(device, bool) or not isinstance(device, str | int | torch.device):
        raise TypeError(f"device must be a string, an int (a GPU index) or a torch.device, got {device!r}.")
    try:
        resolved = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    except (RuntimeError, ValueError) as error:
        raise ValueError(
            f"device {device!r} is not a device name ({error}); use 'cpu', 'cuda' or 'cuda:0'."
        ) from None
    if resolved.type == "cpu":
        return resolved
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"device {device!r}: this machine has no CUDA GPU; use device='cpu'.")
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(f"device {device!r}: this machine has {count} CUDA GPU(s) (0..{count - 1}).")
        return resolved
    if resolved.type == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(f"device {device!r}: MPS is not available on this machine; use device='cpu'.")
        return resolved
    raise ValueError(f"device {device!r} cannot run a metric; use 'cpu', 'cuda' or 'mps'.")


# A CPU reduction over at most this many elements runs on the calling thread alone (torch's grain
# size). The finiteness check runs while the signature's hashing thread holds a core, where a sum
# split over two threads waits at each tensor for the thread the hash displaced (measured: a
# BERT-base model's check 0.35-0.64 s so, 0.11-0.16 s in pieces on one thread).
ONE_THREAD_ELEMENTS = 32768


def non_finite_tensor(model: torch.nn.Module) -> str | None:
    """The name of the first floating-point weight or buffer of ``model`` holding a NaN or an
    infinity (a diverged run, an fp16 overflow), or None: such a checkpoint scores every text NaN."""
    for name, tensor in model.state_dict().items():
        # A NaN or an infinity makes a sum NaN or infinite, so finite sums settle a tensor (12x
        # faster than testing every element); only a sum that overflows is tested element by element.
        if tensor.is_floating_point() and not _finite_sums(tensor) and not torch.isfinite(tensor).all():
            return name
    return None


def _finite_sums(tensor: torch.Tensor) -> bool:
    """Whether the sums of ``tensor``'s elements are finite: on a CPU, summed in pieces of at most
    :data:`ONE_THREAD_ELEMENTS` on this thread alone."""
    dtype = torch.promote_types(tensor.dtype, torch.float32)
    if tensor.device.type != "cpu" or tensor.numel() <= ONE_THREAD_ELEMENTS:
        return bool(torch.isfinite(tensor.sum(dtype=dtype)))
    pieces = tensor.reshape(-1).split(ONE_THREAD_ELEMENTS)
    return bool(torch.isfinite(torch.stack([piece.sum(dtype=dtype) for piece in pieces])).all())
