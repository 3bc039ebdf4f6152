"""Late fusion: each reader's output as a z-score among human stories, combined by shipped weights.

Each part (``union``: the logit of UNION's P(human-written); ``fluency``: the fluency reader's mean
sentence logit) is turned into a z-score by a mean and a standard deviation fixed once on held-back
human stories, and the fused score is the weighted sum of the z-scores. The constants and weights
are stored beside the reader's weights (``fusion.json``) and in its card; no statistic of a call's
texts enters a score, so a story scores the same alone and in any batch.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

FUSION_FILE = "fusion.json"
PARTS = ("union", "fluency")
_CLIP = 1e-7  # a probability this close to 0 or 1 has a logit of about -/+16


def union_logit(probability: float) -> float:
    """The logit of UNION's P(human-written), the probability clipped to [1e-7, 1 - 1e-7].

    >>> union_logit(0.5), round(union_logit(0.9), 4)
    (0.0, 2.1972)
    """
    p = min(max(float(probability), _CLIP), 1.0 - _CLIP)
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class PartScale:
    """One part's place among human stories: its mean and standard deviation there, and its weight."""

    mean: float
    std: float
    weight: float

    def __post_init__(self) -> None:
        for name in ("mean", "std", "weight"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(
                    f"a fusion part's {name} must be a finite number, got {getattr(self, name)!r}"
                )
        if self.std <= 0:
            raise ValueError(f"a fusion part's std must be positive, got {self.std!r}")

    def z(self, value: float) -> float:
        return (value - self.mean) / self.std


@dataclass(frozen=True)
class Fusion:
    """The shipped constants: one :class:`PartScale` per part of :data:`PARTS`, the UNION checkpoint whose
    scores the ``union`` part's constants were fitted on (read in windows), and where they were fitted."""

    parts: Mapping[str, PartScale]
    union_checkpoint: str = "default"
    fitted_on: str = ""

    def __post_init__(self) -> None:
        if set(self.parts) != set(PARTS):
            raise ValueError(f"a fusion has the parts {list(PARTS)}, got {sorted(self.parts)}")

    def combine(self, values: Mapping[str, float]) -> float:
        """The fused score of one story from its parts' raw values (``union`` as its logit)."""
        return sum(scale.weight * scale.z(values[name]) for name, scale in self.parts.items())

    def to_dict(self) -> dict:
        return {
            "parts": {name: vars(scale) for name, scale in self.parts.items()},
            "union_checkpoint": self.union_checkpoint,
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_dict(cls, record: Mapping, source: str = "fusion") -> Fusion:
        try:
            parts = {name: PartScale(**dict(values)) for name, values in dict(record["parts"]).items()}
            return cls(parts, str(record["union_checkpoint"]), str(record.get("fitted_on", "")))
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
