"""What every benchmark prints about where it ran, and the shared timing helpers."""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Callable

import torch


def describe_machine() -> str:
    """CPU model, cores, torch threads, GPU: the facts a reader needs to compare figures."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{cpu}; {os.cpu_count()} cores; torch {torch.__version__} with {torch.get_num_threads()} threads; {gpu}"


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best wall-clock seconds of ``repeat`` runs (the least disturbed by other processes)."""
    best = float("inf")
    for _ in range(repeat):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def matmul_peak_flops(
    device: torch.device, dtype: torch.dtype = torch.float32, seconds: float = 3.0
) -> float:
    """Measured FLOP/s of large square matmuls: the ceiling a transformer's GEMMs can approach."""
    n = 2048 if device.type == "cpu" else 8192
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    a @ b  # warm-up
    best = 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        elapsed = timed(lambda: a @ b)
        best = max(best, 2 * n**3 / elapsed)
    return best
