"""Where one GRUEN ``reference`` call's time goes on a CPU: its oneDNN products, shape by shape, and the rest.

``benchmarks.bench_gruen`` gives a call's share of its exact ceiling: the call's counted FLOPs over
the burst matmul peak (the best single product of a few seconds), divided by its time. This study
splits that time. One call (``evaluate.load("metrics/gruen").compute``, the random-weight BERT-base
models of the benchmark, ``precision="fp32-onednn"`` so that every product goes through oneDNN)
runs with each product timed as it runs, the first use of each weight's oneDNN layout timed apart;
beside it, the burst peak (before and after the call, the better) and each product shape run back
to back for a second at the call's median row count, its weights cycled over the twelve layers.

The products' own rate inside the call, against the burst peak, bounds the call's share from
above whatever the rest costs: the code outside the products can only take back the difference.

    python -m experiments.gruen_product_rates --texts 200 --batch-size 64
"""

from __future__ import annotations

import argparse
import collections
import mmap
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path

import evaluate
import torch

import story_quality.gruen.scorer  # noqa: F401  (imported before the clock, as bench_gruen does)
from benchmarks.machine import describe_machine, minilm_path, peaks_beside
from benchmarks.random_models import gruen_models
from benchmarks.shared_data import ROC_REFERENCE_STORIES
from story_quality import metric_path
from story_quality.bert_forward import onednn_products
from story_quality.cli.flag_spellings import ScriptParser

LAYERS = 12  # BERT-base's: the back-to-back loop cycles over this many weights per shape
BACK_TO_BACK_SECONDS = 1.0


def minor_faults() -> int:
    """This process's minor page faults so far: each first touch of a fresh page of memory."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def seconds_per_fault(megabytes: int = 16, rounds: int = 50) -> float:
    """What one page fault costs here: filling fresh anonymous memory against filling memory already
    mapped, per page (a guest's faults can cost several times a bare machine's)."""
    size = megabytes << 20
    kept = mmap.mmap(-1, size)
    torch.frombuffer(kept, dtype=torch.uint8).fill_(1)
    fresh_seconds = mapped_seconds = 0.0
    faults = 0
    for _ in range(rounds):
        fresh = mmap.mmap(-1, size)
        before, started = minor_faults(), time.perf_counter()
        torch.frombuffer(fresh, dtype=torch.uint8).fill_(1)
        fresh_seconds += time.perf_counter() - started
        faults += minor_faults() - before
        fresh.close()
        started = time.perf_counter()
        torch.frombuffer(kept, dtype=torch.uint8).fill_(1)
        mapped_seconds += time.perf_counter() - started
    return (fresh_seconds - mapped_seconds) / max(1, faults)


class ProductClock:
    """Wraps ``onednn_products.onednn_linear``: seconds, FLOPs, row counts and page faults per
    (in, out) shape, with each weight's first layout timed apart."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[int, int], float] = collections.defaultdict(float)
        self.flops: dict[tuple[int, int], int] = collections.defaultdict(int)
        self.rows: dict[tuple[int, int], list[int]] = collections.defaultdict(list)
        self.faults: dict[tuple[int, int], int] = collections.defaultdict(int)
        self.layout_seconds = 0.0
        self._plain = onednn_products.onednn_linear

    def __enter__(self) -> ProductClock:
        onednn_products.onednn_linear = self._timed
        return self

    def __exit__(self, *exc: object) -> None:
        onednn_products.onednn_linear = self._plain

    def _timed(self, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        rows = hidden.numel() // max(1, hidden.shape[-1])
        if rows >= 2:  # the layout, made on a weight's first product, timed apart from the products
            started = time.perf_counter()
            onednn_products.laid_out(weight)
            self.layout_seconds += time.perf_counter() - started
        faults, started = minor_faults(), time.perf_counter()
        out = self._plain(hidden, weight, bias)
        shape = (weight.shape[1], weight.shape[0])
        self.seconds[shape] += time.perf_counter() - started
        self.faults[shape] += minor_faults() - faults  # oneDNN writes each product into fresh memory
        self.flops[shape] += 2 * rows * weight.shape[0] * weight.shape[1]
        self.rows[shape].append(rows)
        return out


def back_to_back_flops(shape: tuple[int, int], rows: int) -> float:
    """FLOP/s of ``rows`` x ``shape`` products for :data:`BACK_TO_BACK_SECONDS`, cycling over
    :data:`LAYERS` laid-out weights (as a model's layers do)."""
    inner, outer = shape
    hidden = torch.randn(rows, inner)
    weights = [(torch.randn(outer, inner), torch.randn(outer)) for _ in range(LAYERS)]
    for weight, bias in weights:
        onednn_products.onednn_linear(hidden, weight, bias)  # lays each weight out
    flops, started = 0, time.perf_counter()
    while time.perf_counter() - started < BACK_TO_BACK_SECONDS:
        for weight, bias in weights:
            onednn_products.onednn_linear(hidden, weight, bias)
            flops += 2 * rows * inner * outer
    return flops / (time.perf_counter() - started)


def one_call(texts: list[str], models: dict[str, str], batch_size: int) -> tuple[float, int, ProductClock]:
    """The call's seconds and page faults, and its products' clock."""
    evaluate.utils.logging.disable_progress_bar()
    with ProductClock() as clock:
        faults, started = minor_faults(), time.perf_counter()
        metric = evaluate.load(metric_path("gruen"))
        metric.compute(
            predictions=texts,
            lm_scoring="reference",
            batch_size=batch_size,
            precision="fp32-onednn",
            **models,
        )
        return time.perf_counter() - started, minor_faults() - faults, clock


def report(wall: float, faults: int, clock: ProductClock, peak: float) -> None:
    products = sum(clock.seconds.values())
    flops = sum(clock.flops.values())
    print(describe_machine())
    print(f"call {wall:.2f} s; burst peak beside it (oneDNN) {peak / 1e9:.0f} GFLOP/s")
    print(
        "| product (in x out) | calls | median rows | seconds | GFLOP/s in the call | page faults | back to back |"
    )
    print("|---|---|---|---|---|---|---|")
    with torch.inference_mode():
        for shape in sorted(clock.seconds, key=lambda s: -clock.seconds[s]):
            rows = int(statistics.median(clock.rows[shape]))
            alone = back_to_back_flops(shape, max(rows, 2))
            print(
                f"| {shape[0]} x {shape[1]} | {len(clock.rows[shape])} | {rows} | {clock.seconds[shape]:.2f} "
                f"| {clock.flops[shape] / clock.seconds[shape] / 1e9:.0f} | {clock.faults[shape]:,} | {alone / 1e9:.0f} |"
            )
    rate = flops / products
    cost = seconds_per_fault()
    print(
        f"a page fault costs {cost * 1e6:.2f} us here: the call's faults {faults * cost:.2f} s, the products' "
        f"{sum(clock.faults.values()) * cost:.2f} s"
    )
    print(
        f"products {products:.2f} s ({flops / 1e12:.3f} TFLOP, {rate / 1e9:.0f} GFLOP/s = "
        f"{100 * rate / peak:.1f} % of the burst peak); first layouts {clock.layout_seconds:.2f} s; "
        f"the rest {wall - products - clock.layout_seconds:.2f} s; page faults in the call {faults:,}, "
        f"{sum(clock.faults.values()):,} of them in the products"
    )
    print(
        f"share of the exact ceiling (these FLOPs over the burst peak): the call {100 * flops / peak / wall:.1f} %, "
        f"the products alone {100 * rate / peak:.1f} % (the most the code outside them can reach)"
    )


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stories", default=str(ROC_REFERENCE_STORIES), help="one text per line")
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    refusal = onednn_products.onednn_refusal(torch.device("cpu"))
    if refusal:
        raise SystemExit(f"This study times oneDNN's products: {refusal}.")
    lines = [line for line in Path(args.stories).read_text().splitlines() if line.strip()]
    texts = random.Random(0).sample(lines, args.texts)  # the texts bench_gruen scores
    with tempfile.TemporaryDirectory() as root:
        models = gruen_models(Path(root), minilm_path())
        (wall, faults, clock), peaks = peaks_beside(
            lambda: one_call(texts, models, args.batch_size), torch.device("cpu")
        )
    report(wall, faults, clock, peaks[torch.float32].by_library["onednn"])


if __name__ == "__main__":
    main()
