"""Speed of the ``gruen`` metric against a faithful re-creation of the released procedure.

Both sides use BERT-base-sized models (random weights, saved once to a temporary folder with a
real WordPiece tokenizer) and score the same texts in the same run:

* release: models reloaded for each call, every sentence scored alone (batch size 1), the
  CoLA input padded to 128 tokens, edit distance by the dynamic-programming table; its focus
  part (broken in the release) is left out, which only flatters the release.
* metric, ``reference`` mode: ``evaluate.load("metrics/gruen").compute(...)`` end to end,
  model loading, focus and redundancy included.
* ``pll``: the metric's batched pseudo-log-likelihood against one-mask-at-a-time scoring
  (one forward pass per masked token, batch size 1, full LM head) on ``--pll-texts`` texts.

Each procedure runs in its own process so its peak resident memory can be reported. The clock
starts after the process has imported its libraries (torch, transformers, evaluate, NLTK, the
package): ``import evaluate`` alone takes seconds that no procedure's code spends, so every
procedure is timed from the same point; the import time is printed beside. Model loading is timed.
The metric's two procedures (``reference`` mode and batched PLL) run twice, each time in a fresh
process, and the faster run counts: on a machine shared with other work, the least disturbed one.

The ceiling: each metric procedure runs once more under ``torch.utils.flop_counter`` and its
counted FLOPs, divided by the matmul peak measured in the timed run's own process just before and
just after it (the better of the two: a peak taken minutes away, in a slower or faster spell of a
shared machine, moved a share by up to 30 points), give the fastest it could possibly run; the
release's time over that is the largest speed-up exact arithmetic allows here,
and each procedure's share of its ceiling is that floor over its time. Where the CPU multiplies
bf16 natively (AMX or AVX-512 BF16), ``reference`` mode also runs with ``precision="bf16"``: its
share of the bf16 matmul peak and how far its scores move from fp32's.

``precision="fp32"`` multiplies on a CPU with the faster of torch's BLAS and oneDNN, timed by a
machine's first three processes and then kept (``story_quality.machine_choices``): those time it
inside their clock (about 0.3 s), later ones read it. The output says which library the timed
``reference`` run took and whether it read a settled choice.

The fp32 peak is the better of torch's own products (its BLAS: MKL in the x86 wheels) and
oneDNN's, each printed: on an AMD EPYC with AVX-512, MKL reaches half of oneDNN's rate. Where
torch has oneDNN, ``reference`` mode and batched PLL also run with ``precision="fp32-onednn"``
(the same fp32 products, counted alike), best of two processes each, with how far their values
move from fp32's.

With ``--device cuda`` every procedure (the release re-creation too) runs on the GPU and the peaks
are that GPU's; where the GPU computes bf16, ``reference`` mode also runs with ``precision="bf16"``.

    python -m benchmarks.bench_gruen --stories /path/to/stories.txt --texts 200
    python -m benchmarks.bench_gruen --device cuda --texts 200 --pll-texts 10 --batch-size 64
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import resource
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.machine import describe_machine, matmul_peak_flops, minilm_path, peaks_beside  # noqa: E402
from benchmarks.random_models import gruen_models  # noqa: E402
from benchmarks.shared_data import ROC_REFERENCE_STORIES  # noqa: E402
from story_quality import metric_path  # noqa: E402
from story_quality.bert_forward.onednn_products import (  # noqa: E402
    fp32_library,
    kept_fp32_library,
    onednn_refusal,
)
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.precision import autocast, bf16_refusal, check_precision  # noqa: E402


def _table_edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by the whole dynamic-programming table, as a plain Python port computes it."""
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            substitution = table[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, substitution)
    return table[-1][-1]


def release_procedure(texts: list[str], models: dict[str, str], device: str = "cpu") -> list[float]:
    """The release's steps: reload per call, one sentence at a time, CoLA padded to 128."""
    import difflib

    from transformers import AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer

    from story_quality.gruen.sentences import text_to_sentences

    texts = [text_to_sentences(t) for t in texts]
    tok = AutoTokenizer.from_pretrained(models["lm_model"])
    lm = AutoModelForMaskedLM.from_pretrained(models["lm_model"]).to(device).eval()
    lm_values = []
    with torch.no_grad():
        for sentences in texts:
            total = 0.0
            for s in sentences:
                pieces = tok.tokenize(s)[:510]
                ids = torch.tensor(
                    [[tok.cls_token_id, *tok.convert_tokens_to_ids(pieces), tok.sep_token_id]], device=device
                )
                total += math.exp(lm(input_ids=ids, labels=ids).loss.item())
            lm_values.append(total / len(sentences) if sentences else 0.0)
    cola_tok = AutoTokenizer.from_pretrained(models["cola_model"])
    cola = AutoModelForSequenceClassification.from_pretrained(models["cola_model"]).to(device).eval()
    cola_values = []
    with torch.no_grad():
        for sentences in texts:
            logits = [
                cola(
                    **cola_tok(
                        s, truncation=True, max_length=128, padding="max_length", return_tensors="pt"
                    ).to(device)
                )
                .logits[0, 1]
                .item()
                for s in sentences
            ]
            cola_values.append(sum(logits) / len(logits) if logits else 0.0)

    def flags(a: str, b: str) -> int:
        if a in b or b in a:
            return 4
        aw, bw = a.split(), b.split()
        if max(len(aw), len(bw)) < 5:
            return 0
        lcs = difflib.SequenceMatcher(None, a, b).find_longest_match(0, len(a), 0, len(b)).size
        lcs_w = difflib.SequenceMatcher(None, aw, bw).find_longest_match(0, len(aw), 0, len(bw)).size
        return (
            (lcs > 0.8 * min(len(a), len(b)))
            + (lcs_w > 0.8 * min(len(aw), len(bw)))
            + (_table_edit_distance(a, b) < 0.6 * max(len(a), len(b)))
            + (sum(w in bw for w in aw) > 0.8 * min(len(aw), len(bw)))
        )

    scores = []
    for sentences, lm_value, cola_value in zip(texts, lm_values, cola_values, strict=True):
        grammar = max(0.0, (math.exp(-0.5 * lm_value) + cola_value) / 8 + 0.5)
        pairs = sum(flags(a, b) for i, a in enumerate(sentences) for b in sentences[i + 1 :])
        scores.append(min(1.0, max(0.0, grammar - 0.1 * pairs)))
    return scores


def metric_procedure(
    texts: list[str],
    models: dict[str, str],
    lm_scoring: str,
    batch_size: int,
    precision: str = "fp32",
    device: str = "cpu",
) -> list[float]:
    import evaluate

    evaluate.utils.logging.disable_progress_bar()
    metric = evaluate.load(metric_path("gruen"))
    result = metric.compute(
        predictions=texts,
        lm_scoring=lm_scoring,
        batch_size=batch_size,
        device=device,
        precision=precision,
        **models,
    )
    # The release re-creation has no focus term: compare the parts both compute.
    return [
        min(1.0, max(0.0, g + r)) for g, r in zip(result["grammaticality"], result["redundancy"], strict=True)
    ]


def one_mask_at_a_time(texts: list[str], models: dict[str, str], device: str = "cpu") -> list[float]:
    """Pseudo-log-likelihood the slow way: one forward pass per masked token, full LM head."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from story_quality.gruen.sentences import text_to_sentences

    tok = AutoTokenizer.from_pretrained(models["lm_model"])
    lm = AutoModelForMaskedLM.from_pretrained(models["lm_model"]).to(device).eval()
    out = []
    with torch.no_grad():
        for sentence in [s for t in texts for s in text_to_sentences(t)]:
            ids = tok(sentence, truncation=True, return_tensors="pt")["input_ids"][0].to(device)
            nll = 0.0
            for position in range(1, len(ids) - 1):
                masked = ids.clone()
                masked[position] = tok.mask_token_id
                nll -= torch.log_softmax(lm(input_ids=masked[None]).logits[0, position], -1)[
                    ids[position]
                ].item()
            out.append(nll / max(1, len(ids) - 2))
    return out


def batched_pll(
    texts: list[str], models: dict[str, str], batch_size: int, device: str = "cpu", precision: str = "fp32"
) -> list[float]:
    from story_quality.checkpoints.reference import CheckpointReference
    from story_quality.gruen.grammaticality import pll_nll_scores
    from story_quality.gruen.loading import load_model
    from story_quality.gruen.sentences import text_to_sentences

    where = torch.device(device)
    lm = load_model("lm", CheckpointReference.parse(models["lm_model"]), where)
    # As the metric runs its models: "fp32" in the library it chose on this machine.
    with autocast(check_precision(precision, where), where):
        return pll_nll_scores(lm, [s for t in texts for s in text_to_sentences(t)], batch_size)


def import_libraries() -> float:
    """Import every library a procedure uses (torch, transformers, evaluate, NLTK, the package), before
    any clock starts: seconds. ``import evaluate`` alone takes several seconds, outside any code a
    procedure runs, so every procedure is timed after it, the same for all."""
    started = time.perf_counter()
    import evaluate  # noqa: F401
    import nltk  # noqa: F401
    import transformers  # noqa: F401

    import story_quality.gruen.scorer  # noqa: F401

    return time.perf_counter() - started


def _timed(name: str, args: tuple, with_peak: bool = False, device: str = "cpu") -> dict:
    """One procedure's time after its imports; ``with_peak``: with the better of the matmul peaks
    measured on ``device`` in the same process just before and just after it."""
    import_seconds = import_libraries()
    # The device's context and its matmul library, started outside the clock as the imports are: the
    # runs measured with_peak start them in the peak measurement, so every procedure starts the same.
    warm = torch.ones(64, 64, device=device)
    warm @ warm
    # Earlier processes on this machine may have timed fp32's CPU library and settled the choice:
    # then no procedure times it inside its clock (a machine's first three do, about 0.3 s each).
    kept = kept_fp32_library(torch.get_num_threads()) if device == "cpu" else None

    def work() -> tuple[float, object]:
        started = time.perf_counter()
        result = globals()[name](*args)
        return time.perf_counter() - started, result

    if with_peak:
        (seconds, result), peaks = peaks_beside(work, torch.device(device))
        peak, by_library = peaks[torch.float32].best, peaks[torch.float32].by_library
    else:
        (seconds, result), peak, by_library = work(), None, None
    return {
        "seconds": seconds,
        "import_seconds": import_seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_gpu_mib": torch.cuda.max_memory_allocated() / 2**20 if device != "cpu" else None,
        "matmul_peak_flops": peak,  # the best of the libraries'
        "matmul_peak_by_library": by_library,
        "fp32_library": fp32_library(torch.device(device)),  # the library precision="fp32" took here
        "fp32_library_kept_before": kept,
        "result": result,
    }


def _counted_flops(name: str, args: tuple) -> int:
    """The FLOPs of one procedure (in a spawned process of its own): torch's counter sees torch's
    own products only, so ``precision="fp32"`` is pinned to torch's library here; oneDNN's fp32
    products, where the timed run takes them, are the same products."""
    from torch.utils.flop_counter import FlopCounterMode

    from story_quality.bert_forward.onednn_products import FP32_LIBRARY_VARIABLE

    os.environ[FP32_LIBRARY_VARIABLE] = "torch"
    with FlopCounterMode(display=False) as counter:
        globals()[name](*args)
    return counter.get_total_flops()


def run_isolated(name: str, *args, count_flops: bool = False, with_peak: bool = False, device: str = "cpu"):
    """``_timed`` (or, with ``count_flops``, the FLOP count) of one procedure in a fresh process;
    ``device`` is where the peak beside it is measured (the procedure's own ``device`` is in ``args``)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        if count_flops:
            return pool.apply(_counted_flops, (name, args))
        return pool.apply(_timed, (name, args, with_peak, device))


def best_of_processes(name: str, *args, repeat: int = 2, device: str = "cpu") -> dict:
    """``run_isolated`` ``repeat`` times, each in a fresh process with the matmul peak beside it: the
    fastest run (on a machine shared with other work, the least disturbed one, as
    ``benchmarks.machine.timed`` takes)."""
    runs = [run_isolated(name, *args, with_peak=True, device=device) for _ in range(repeat)]
    return min(runs, key=lambda run: run["seconds"])


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--stories",
        default=str(ROC_REFERENCE_STORIES),
        help="text file, one multi-sentence text per line (default: the ROC test stories beside the repo)",
    )
    parser.add_argument("--texts", type=int, default=200, help="texts to score (reference mode)")
    parser.add_argument("--pll-texts", type=int, default=10, help="texts for the PLL comparison")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--tokenizer", default=None, help="WordPiece tokenizer to give the random models")
    parser.add_argument(
        "--device",
        default="cpu",
        help="where every procedure runs and the matmul peaks are measured: cpu (default) or cuda",
    )
    parser.add_argument("--output", help="write the figures as JSON here")
    return parser


def onednn_figures(
    texts: list[str],
    pll: list[str],
    models: dict[str, str],
    args: argparse.Namespace,
    fp32_runs: tuple[dict, dict, dict],
    counted: tuple[int, int],
) -> dict[str, float]:
    """``reference`` mode and batched PLL with ``precision="fp32-onednn"`` (best of two processes
    each), against the release and fp32's runs (``fp32_runs``: release, ``reference``, PLL) and
    fp32's counted FLOPs (the same products)."""
    release, ours, fast_pll = fp32_runs
    flops, pll_flops = counted
    dev, batch = args.device, args.batch_size
    onednn = best_of_processes(
        "metric_procedure", texts, models, "reference", batch, "fp32-onednn", dev, device=dev
    )
    onednn_pll = best_of_processes("batched_pll", pll, models, batch, dev, "fp32-onednn", device=dev)
    moved = [abs(a - b) for a, b in zip(onednn["result"], ours["result"], strict=True)]
    pll_moved = [abs(a - b) for a, b in zip(onednn_pll["result"], fast_pll["result"], strict=True)]
    return {
        "metric_reference_onednn_seconds": onednn["seconds"],
        "reference_onednn_speedup": release["seconds"] / onednn["seconds"],
        "reference_onednn_share_of_ceiling": flops / onednn["matmul_peak_flops"] / onednn["seconds"],
        "onednn_max_score_difference_vs_fp32": max(moved),
        "onednn_mean_score_difference_vs_fp32": sum(moved) / len(moved),
        "batched_pll_onednn_seconds": onednn_pll["seconds"],
        "pll_onednn_share_of_ceiling": pll_flops / onednn_pll["matmul_peak_flops"] / onednn_pll["seconds"],
        "onednn_max_pll_difference_vs_fp32": max(pll_moved),
    }


def bf16_figures(bf16: dict, ours: dict, flops: int, device: torch.device) -> dict[str, float]:
    """``reference`` mode's bf16 run against the bf16 peak, and how far it moves fp32's scores."""
    bf16_peak = matmul_peak_flops(device, torch.bfloat16)
    moved = [abs(a - b) for a, b in zip(bf16["result"], ours["result"], strict=True)]
    return {
        "bf16_matmul_peak_gflops": bf16_peak / 1e9,
        "metric_reference_bf16_seconds": bf16["seconds"],
        "metric_reference_bf16_share_of_bf16_peak": flops / bf16_peak / bf16["seconds"],
        "bf16_max_score_difference_vs_fp32": max(moved),
        "bf16_mean_score_difference_vs_fp32": sum(moved) / len(moved),
    }


def main() -> None:
    args = build_parser().parse_args()

    lines = [line for line in Path(args.stories).read_text().splitlines() if line.strip()]
    texts = random.Random(0).sample(lines, args.texts)
    figures = {
        "machine": describe_machine(),
        "device": args.device,
        "texts": args.texts,
        "batch_size": args.batch_size,
    }
    with tempfile.TemporaryDirectory() as root:
        models = gruen_models(Path(root), args.tokenizer or minilm_path())
        dev, pll = args.device, texts[: args.pll_texts]
        release = run_isolated("release_procedure", texts, models, dev)
        ours = best_of_processes(
            "metric_procedure", texts, models, "reference", args.batch_size, "fp32", dev, device=dev
        )
        slow_pll = run_isolated("one_mask_at_a_time", pll, models, dev)
        fast_pll = best_of_processes("batched_pll", pll, models, args.batch_size, dev, device=dev)
        ours_flops = run_isolated(
            "metric_procedure", texts, models, "reference", args.batch_size, "fp32", dev, count_flops=True
        )
        pll_flops = run_isolated("batched_pll", pll, models, args.batch_size, dev, count_flops=True)
        bf16 = (
            None
            if bf16_refusal(torch.device(dev))
            else run_isolated("metric_procedure", texts, models, "reference", args.batch_size, "bf16", dev)
        )
        onednn = (
            {}
            if onednn_refusal(torch.device(dev))
            else onednn_figures(texts, pll, models, args, (release, ours, fast_pll), (ours_flops, pll_flops))
        )
    peak, pll_peak = ours["matmul_peak_flops"], fast_pll["matmul_peak_flops"]
    gap = max(abs(a - b) for a, b in zip(release["result"], ours["result"], strict=True))
    pll_gap = max(abs(a - b) for a, b in zip(slow_pll["result"], fast_pll["result"], strict=True))
    figures |= {
        # every clock starts after the process's imports (import_libraries): import evaluate is outside
        "clock_includes_import_evaluate": False,
        "release_seconds": release["seconds"],
        "release_peak_rss_mib": release["peak_rss_mib"],
        "metric_reference_seconds": ours["seconds"],
        "metric_reference_import_seconds": ours["import_seconds"],
        "release_import_seconds": release["import_seconds"],
        "metric_reference_peak_rss_mib": ours["peak_rss_mib"],
        "metric_reference_fp32_library": ours["fp32_library"],
        "metric_reference_fp32_choice_read_from_kept": ours["fp32_library_kept_before"] is not None,
        "reference_speedup": release["seconds"] / ours["seconds"],
        "max_score_difference_vs_release": gap,
        "pll_texts": args.pll_texts,
        "pll_sentences": len(slow_pll["result"]),
        "one_mask_at_a_time_seconds": slow_pll["seconds"],
        "batched_pll_seconds": fast_pll["seconds"],
        "batched_pll_peak_rss_mib": fast_pll["peak_rss_mib"],
        "metric_reference_peak_gpu_mib": ours["peak_gpu_mib"],
        "batched_pll_peak_gpu_mib": fast_pll["peak_gpu_mib"],
        "pll_speedup": slow_pll["seconds"] / fast_pll["seconds"],
        "max_pll_difference": pll_gap,
        "reference_matmul_peak_gflops": peak / 1e9,
        "metric_reference_gflop": ours_flops / 1e9,
        "metric_reference_floor_seconds": ours_flops / peak,
        "reference_speedup_ceiling": release["seconds"] * peak / ours_flops,
        "pll_matmul_peak_gflops": pll_peak / 1e9,
        "batched_pll_gflop": pll_flops / 1e9,
        "batched_pll_floor_seconds": pll_flops / pll_peak,
        "pll_speedup_ceiling": slow_pll["seconds"] * pll_peak / pll_flops,
        "reference_share_of_ceiling": ours_flops / peak / ours["seconds"],
        "pll_share_of_ceiling": pll_flops / pll_peak / fast_pll["seconds"],
    }
    for name, flops in ours["matmul_peak_by_library"].items():  # the peak, library by library
        figures[f"reference_matmul_peak_{name}_gflops"] = flops / 1e9
        figures[f"reference_share_of_{name}_ceiling"] = ours_flops / flops / ours["seconds"]
    figures |= onednn
    if bf16 is not None:  # bf16 autocast where the CPU multiplies bf16 natively
        figures |= bf16_figures(bf16, ours, ours_flops, torch.device(args.device))
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")
    if args.output:
        Path(args.output).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
