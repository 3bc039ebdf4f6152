"""Turn a trained fluency reader into coherence_fluency's shipped reader, inside the project.

    python training/shipped_assets/shipped_reader.py export outputs/fluency-c1
    python -m benchmarks.fit_fluency_fusion metrics/coherence_fluency/default_reader --union-scores ...
    python training/shipped_assets/shipped_reader.py seal

``export`` writes the weights as fp16 safetensors (the reader upcasts them to fp32), the config and
the tokenizer into ``metrics/coherence_fluency/default_reader/``; the fusion constants are then
fitted on those very weights (``fusion.json``) and the card (``README.md``) written beside them.
``seal`` writes the ``SHA256SUMS`` manifest of the folder's files and prints the manifest's own
sha256, which ``story_quality/coherence_fluency/scorer.py`` records
(``SHIPPED_READER_MANIFEST_SHA256``): the metric checks both at every load.
"""

from __future__ import annotations

import argparse
import pathlib

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from story_quality.checkpoints.files import sha256_of
from story_quality.coherence_fluency.scorer import SHIPPED_READER_FOLDER
from story_quality.fluency.reader import reader_problem
from story_quality.union.checkpoints import MANIFEST

TARGET = pathlib.Path(__file__).resolve().parents[2] / "metrics" / "coherence_fluency" / SHIPPED_READER_FOLDER
SIZE_LIMIT_BYTES = 25 * 10**6
SEALED = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "fusion.json",
    "README.md",
)


def export(source: pathlib.Path, target: pathlib.Path) -> None:
    problem = reader_problem(source) if source.is_dir() else f"{source} is not a folder"
    if problem is not None:
        raise SystemExit(f"shipped_reader.py: error: not a fluency reader: {problem}")
    model = AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float16)
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    if size > SIZE_LIMIT_BYTES:
        raise SystemExit(f"shipped_reader.py: error: {source} is {size / 1e6:.1f} MB in fp16, over 25 MB")
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    print(f"wrote {target} ({size / 1e6:.1f} MB of weights in fp16)")


def seal(target: pathlib.Path) -> None:
    missing = [name for name in SEALED if not (target / name).is_file()]
    if missing:
        raise SystemExit(
            f"shipped_reader.py: error: {target} lacks {', '.join(missing)}: export, fit and card first"
        )
    manifest = "".join(f"{sha256_of(target / name)}  {name}\n" for name in SEALED)
    (target / MANIFEST).write_text(manifest, encoding="utf-8")
    print(f"SHIPPED_READER_MANIFEST_SHA256 = {sha256_of(target / MANIFEST)!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("step", choices=("export", "seal"))
    parser.add_argument("source", nargs="?", type=pathlib.Path, help="export: the trained reader's folder")
    parser.add_argument("--target", type=pathlib.Path, default=TARGET)
    args = parser.parse_args(argv)
    if args.step == "export":
        if args.source is None:
            parser.error("export needs the trained reader's folder")
        export(args.source, args.target)
    else:
        seal(args.target)


if __name__ == "__main__":
    main()
