"""coherence_fluency scoring as one object: a fluency reader and UNION's shipped default, loaded once.

The scorer of a candidate third metric: no fluency reader has passed the ship rule yet
(``benchmarks/RESULTS.md``), so it is not in the registry; ``benchmarks.bench_coherence_fluency``
and the tests run it on a reader folder, and a reader that passes needs its registry line only.

    >>> scorer = CoherenceFluencyScorer("outputs/reader")              # doctest: +SKIP
    >>> result = scorer.score(["Ken went to the store. He bought milk."])  # doctest: +SKIP
    >>> result.scores, result.union, result.fluency, result.signature      # doctest: +SKIP

Each story is read twice: by UNION (the shipped default, long stories in windows, as the fusion
was fitted) for coherence, and sentence by sentence by the fluency reader. Each part becomes a
z-score among human stories by the constants in the reader's folder (:mod:`story_quality.fluency.fusion`)
and the fused score is their weighted sum, by weights that depend on the story's length alone: 0
is the human stories' mean. The parts come back beside the whole.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Sequence
from typing import Any

from story_quality.checkpoints.files import checkpoint_sha256
from story_quality.coherence_fluency.options import COHERENCE_FLUENCY_OPTIONS
from story_quality.fluency.fusion import Fusion, story_words
from story_quality.fluency.reader import FluencyReader, NotAFluencyReader
from story_quality.signature import Signature
from story_quality.text_checks import check_texts
from story_quality.union.scorer import UnionScorer

SHIPPED_READER = "default"
# The fusion's UNION part reads long stories in windows, as its constants were fitted.
LONG_STORIES = "windows"


def reader_folder(name: str) -> pathlib.Path:
    """The folder a reader's name means: a local folder with the reader and its ``fusion.json``.

    No reader ships: none of the candidates passed the ship rule (``benchmarks/RESULTS.md``), so
    ``"default"`` is refused, saying so.
    """
    if name == SHIPPED_READER:
        raise NotAFluencyReader(
            "no fluency reader ships: no candidate passed the ship rule (benchmarks/RESULTS.md, 'A fluency "
            "reader beside UNION'); give a folder written by training/train_fluency.py and fitted by "
            "benchmarks/fit_fluency_fusion.py"
        )
    folder = pathlib.Path(name)
    if not folder.is_dir():
        raise NotAFluencyReader(
            f"{name!r} is not a fluency reader: give a folder written by training/train_fluency.py with "
            "the fusion.json of benchmarks/fit_fluency_fusion.py"
        )
    return folder


@dataclasses.dataclass(frozen=True)
class CoherenceFluencyResult:
    """One call's scores, in input order: the fused score and its two parts, and what made them."""

    scores: list[float]
    union: list[float]  # UNION's P(human-written)
    fluency: list[float]  # the reader's mean sentence logit
    signature: str

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else math.nan

    def as_dict(self) -> dict:
        """The metric's result: ``scores``, ``coherence_fluency_score``, ``union``, ``fluency``, ``signature``."""
        return {
            "scores": self.scores,
            "coherence_fluency_score": self.mean,
            "union": self.union,
            "fluency": self.fluency,
            "signature": self.signature,
        }


class CoherenceFluencyScorer:
    """A fluency reader with its fusion constants and UNION's shipped default, loaded once."""

    def __init__(self, checkpoint: str) -> None:
        self.folder = reader_folder(checkpoint)
        self.reader = FluencyReader(self.folder)
        self.fusion = Fusion.read(self.folder)
        self.union = UnionScorer(self.fusion.union_checkpoint)

    def signature(self, union_signature: str) -> Signature:
        """What made the scores: the reader (its files' sha256) and UNION's own signature's settings."""
        union = Signature.parse(union_signature)
        return Signature.of(
            "coherence_fluency",
            f"reader:{self.folder.name}@sha256:{(checkpoint_sha256(self.folder) or '')[:12]}",
            *union.parts,
        )

    @COHERENCE_FLUENCY_OPTIONS.keywords
    def score(self, texts: Sequence[str], **options: Any) -> CoherenceFluencyResult:
        """The fused score of each text, with its parts; texts and options are checked before any work."""
        texts = check_texts(texts)
        checked = COHERENCE_FLUENCY_OPTIONS.check(options, caller="score()")
        union = self.union.score(
            texts,
            batch_size=checked["batch_size"],
            device=checked["device"],
            precision=checked["precision"],
            long_stories=LONG_STORIES,
        )
        self.reader.model.to(checked["device"])
        fluency = [story.mean_logit for story in self.reader.read(texts, 2 * checked["batch_size"])]
        fused = [
            self.fusion.combine({"union": u, "fluency": f}, story_words(text))
            for text, u, f in zip(texts, union.scores, fluency, strict=True)
        ]
        return CoherenceFluencyResult(
            fused, list(union.scores), fluency, str(self.signature(union.signature))
        )
