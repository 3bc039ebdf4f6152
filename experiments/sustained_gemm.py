"""How fast this CPU runs UNION's layer products when they run for seconds, not one call at a time.

``benchmarks.machine.matmul_peak_flops`` keeps the best single matmul of a few seconds: a burst.
A BERT-base layer's four products (fused q/k/v, attention output, feed-forward in and out) at the
shapes of a batch of 64 ROC stories (3,600 rows), run back to back for as long as one slice of
``bench_union_speed`` (8.5 s), best of two, show what the linear layers can sustain beside it.

    python -m experiments.sustained_gemm
"""

from __future__ import annotations

import time

import torch

from benchmarks.machine import peaks_beside

ROWS = 3600
SHAPES = [(768, 2304), (768, 768), (768, 3072), (3072, 768)]  # (in, out) of each product
SECONDS = 8.5


def back_to_back_flops() -> float:
    """FLOP/s of the four products looped for ``SECONDS``."""
    operands = [
        (torch.randn(ROWS, k), torch.randn(n, k), torch.randn(n), torch.empty(ROWS, n)) for k, n in SHAPES
    ]
    flops, started = 0.0, time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        for x, weight, bias, out in operands:
            torch.addmm(bias, x, weight.t(), out=out)
            flops += 2 * x.shape[0] * x.shape[1] * weight.shape[0]
    return flops / (time.perf_counter() - started)


def main() -> None:
    sustained, peaks = peaks_beside(lambda: max(back_to_back_flops() for _ in range(2)), torch.device("cpu"))
    peak = peaks[torch.float32].by_library["torch"]  # the library the loop's addmm runs in
    print(
        f"burst peak {peak / 1e9:.0f} GFLOP/s; the layer's products back to back for {SECONDS} s: "
        f"{sustained / 1e9:.0f} GFLOP/s = {100 * sustained / peak:.0f} % of it"
    )


if __name__ == "__main__":
    main()
