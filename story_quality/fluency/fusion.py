"""Late fusion: each reader's output as a z-score among human stories, combined by shipped weights.

Each part (``union``: UNION's P(human-written); ``fluency``: the fluency reader's mean sentence
logit) is turned into a z-score by a mean and a standard deviation fixed once on held-back human
stories, and the fused score is the weighted sum of the z-scores. The weights depend on the
story's length alone (its number of words, :func:`story_words`): a regime holds the stories of at
most ``most_words`` words, the first regime that holds a story gives its weights. The constants and
weights are stored beside the reader's weights (``fusion.json``) and in its card; no statistic of a
call's texts enters a score, so a story scores the same alone and in any batch.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

FUSION_FILE = "fusion.json"
PARTS = ("union", "fluency")


def story_words(text: str) -> int:
    """The story's length as the fusion's regimes count it: its whitespace-separated words.

    >>> story_words("Ken went home . He slept.")
    6
    """
    return len(text.split())


@dataclass(frozen=True)
class PartScale:
    """One part's place among human stories: its mean and standard deviation there."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        for name in ("mean", "std"):
            if not isinstance(getattr(self, name), int | float) or not math.isfinite(getattr(self, name)):
                raise ValueError(
                    f"a fusion part's {name} must be a finite number, got {getattr(self, name)!r}"
                )
        if self.std <= 0:
            raise ValueError(f"a fusion part's std must be positive, got {self.std!r}")

    def z(self, value: float) -> float:
        return (value - self.mean) / self.std


@dataclass(frozen=True)
class Regime:
    """The weights of the stories of at most ``most_words`` words (None: of any length)."""

    most_words: int | None
    weights: Mapping[str, float]

    def __post_init__(self) -> None:
        if set(self.weights) != set(PARTS) or not all(math.isfinite(w) for w in self.weights.values()):
            raise ValueError(
                f"a regime weighs each of {list(PARTS)} by a finite number, got {dict(self.weights)}"
            )
        if self.most_words is not None and (not isinstance(self.most_words, int) or self.most_words < 1):
            raise ValueError(f"a regime's most_words is a positive integer or None, got {self.most_words!r}")


@dataclass(frozen=True)
class Fusion:
    """The shipped constants: a :class:`PartScale` per part of :data:`PARTS`, the regimes in order of
    length (the last one of any length), the UNION checkpoint whose scores the ``union`` part's
    constants were fitted on (read in windows), and where they were fitted."""

    scales: Mapping[str, PartScale]
    regimes: tuple[Regime, ...]
    union_checkpoint: str = "default"
    fitted_on: str = ""

    def __post_init__(self) -> None:
        if set(self.scales) != set(PARTS):
            raise ValueError(f"a fusion has the parts {list(PARTS)}, got {sorted(self.scales)}")
        bounds = [regime.most_words for regime in self.regimes]
        if (
            not bounds
            or bounds[-1] is not None
            or None in bounds[:-1]
            or bounds[:-1] != sorted(set(bounds[:-1]))
        ):
            raise ValueError(f"a fusion's regimes rise in length and the last holds any length, got {bounds}")

    def regime(self, words: int) -> Regime:
        return next(r for r in self.regimes if r.most_words is None or words <= r.most_words)

    def combine(self, values: Mapping[str, float], words: int) -> float:
        """The fused score of one story of ``words`` words from its parts' values."""
        weights = self.regime(words).weights
        return sum(weights[name] * scale.z(values[name]) for name, scale in self.scales.items())

    def to_dict(self) -> dict:
        return {
            "scales": {name: {"mean": s.mean, "std": s.std} for name, s in self.scales.items()},
            "regimes": [{"most_words": r.most_words, "weights": dict(r.weights)} for r in self.regimes],
            "union_checkpoint": self.union_checkpoint,
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_dict(cls, record: Mapping, source: str = "fusion") -> Fusion:
        try:
            return cls(
                {name: PartScale(**dict(values)) for name, values in dict(record["scales"]).items()},
                tuple(Regime(r["most_words"], dict(r["weights"])) for r in record["regimes"]),
                str(record["union_checkpoint"]),
                str(record.get("fitted_on", "")),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{source}: not a fusion record ({error})") from None

    def write(self, folder: str | pathlib.Path) -> pathlib.Path:
        path = pathlib.Path(folder) / FUSION_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, folder: str | pathlib.Path) -> Fusion:
        path = pathlib.Path(folder) / FUSION_FILE
        if not path.is_file():
            raise ValueError(f"{folder} holds no {FUSION_FILE}: the fusion's constants are missing")
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"{path} is not JSON ({error})") from None
        return cls.from_dict(record, str(path))
