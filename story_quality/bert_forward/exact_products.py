"""When a CPU's fp32 matrix product may be laid out differently without changing one bit.

MKL multiplies matrices of fewer than 12 rows with other kernels than the blocked one, and those
round differently (measured for inner widths 32 to 768). From 12 rows on, each
row's result does not depend on how many other rows the product has, and writing the product
column-major (the same product computed as its transpose) gives the same bits. Both of the exact
rearrangements the metrics use, the packed BERT layers and GRUEN's column-major LM head, therefore
run only on products of at least :data:`MIN_ROWS` rows, with room for CPUs whose kernels take more
rows at a time; smaller ones keep the plain layout.
"""

from __future__ import annotations

import torch

MIN_ROWS = 64


def exact_cpu_product(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is fp32 on a CPU outside autocast, where these rearrangements are exact."""
    return (
        tensor.device.type == "cpu" and tensor.dtype == torch.float32 and not torch.is_autocast_enabled("cpu")
    )


def row_slices(rows: int, most: int) -> list[slice]:
    """``rows`` cut into the fewest nearly equal slices of at most ``most`` rows: one slice when
    ``rows <= most``, otherwise slices of at least ``most // 2`` rows each (so with ``most`` at least
    twice :data:`MIN_ROWS`, a slice has fewer than MIN_ROWS rows only where ``rows`` has)."""
    count = -(-rows // most)
    bounds = [rows * i // count for i in range(count + 1)]
    return [slice(start, stop) for start, stop in zip(bounds, bounds[1:], strict=False)]
