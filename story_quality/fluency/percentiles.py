"""A sentence score as its percentile among human sentences of the same length.

A sentence's length is its number of normalised words (:mod:`story_quality.fluency.text`); the
lengths fall in the buckets of :data:`LENGTH_BUCKETS` (at most 5 words, 6-8, 9-11, 12-15, 16-20,
21-30, more), each with its own sorted human scores. The percentile of a score is
``100 * (below + equal / 2) / n`` among its bucket's ``n`` stored scores: 50 is a human
sentence's median, 0 lower than every human one. A bucket keeps at most ``most_points`` scores
(the order statistics at ranks ``floor((i + 1/2) * n / most_points)``), rounded to 1e-4, so the
table stays a small JSON file (``percentiles.json``) in the reader's folder. Nothing of a call's
other sentences enters a percentile.
"""

from __future__ import annotations

import bisect
import json
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERCENTILES_FILE = "percentiles.json"
LENGTH_BUCKETS: tuple[int | None, ...] = (5, 8, 11, 15, 20, 30, None)  # most words per bucket
MOST_POINTS = 1000
MIN_POINTS = 20  # a bucket with fewer human sentences cannot place a score


@dataclass(frozen=True)
class PercentileTable:
    """The sorted human scores of each length bucket (``bounds``: the most words of each, None last)."""

    bounds: tuple[int | None, ...]
    points: tuple[tuple[float, ...], ...]
    described: str = ""

    def __post_init__(self) -> None:
        if not self.bounds or self.bounds[-1] is not None or len(self.points) != len(self.bounds):
            raise ValueError(f"a percentile table has one bucket per bound, the last None; got {self.bounds}")
        for bound, points in zip(self.bounds, self.points, strict=True):
            if len(points) < MIN_POINTS or list(points) != sorted(points):
                raise ValueError(
                    f"the bucket of at most {bound} words needs {MIN_POINTS}+ sorted scores, has {len(points)}"
                )

    def bucket(self, length: int) -> int:
        """The index of the bucket that holds sentences of ``length`` words."""
        return next(i for i, b in enumerate(self.bounds) if b is None or length <= b)

    def percentiles(self, scores: Sequence[float], lengths: Sequence[int]) -> np.ndarray:
        """Each score's percentile among the human scores of its length's bucket."""
        out = np.empty(len(scores), dtype=np.float64)
        for i, (score, length) in enumerate(zip(scores, lengths, strict=True)):
            if not math.isfinite(score):
                raise ValueError(f"sentence {i}: score {score!r} is not a finite number")
            points = self.points[self.bucket(int(length))]
            below, upto = bisect.bisect_left(points, score), bisect.bisect_right(points, score)
            out[i] = 100.0 * (below + (upto - below) / 2) / len(points)
        return out

    @classmethod
    def build(
        cls,
        scores: Sequence[float],
        lengths: Sequence[int],
        bounds: tuple[int | None, ...] = LENGTH_BUCKETS,
        most_points: int = MOST_POINTS,
        described: str = "",
    ) -> PercentileTable:
        """The table of these human sentences' scores and lengths."""
        by_bucket: list[list[float]] = [[] for _ in bounds]
        probe = cls(bounds, tuple((0.0,) * MIN_POINTS for _ in bounds))  # only its bucket()
        for score, length in zip(scores, lengths, strict=True):
            by_bucket[probe.bucket(int(length))].append(float(score))
        points = []
        for values in by_bucket:
            ordered = np.sort(np.asarray(values, dtype=np.float64))
            if len(ordered) > most_points:
                ordered = ordered[((np.arange(most_points) + 0.5) * len(ordered) / most_points).astype(int)]
            points.append(tuple(sorted(round(float(v), 4) for v in ordered)))
        return cls(tuple(bounds), tuple(points), described)

    def write(self, folder: str | pathlib.Path) -> pathlib.Path:
        path = pathlib.Path(folder) / PERCENTILES_FILE
        record = {
            "described": self.described,
            "bounds": list(self.bounds),
            "points": [list(p) for p in self.points],
        }
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, folder: str | pathlib.Path) -> PercentileTable:
        path = pathlib.Path(folder) / PERCENTILES_FILE
        if not path.is_file():
            raise ValueError(
                f"{folder} holds no {PERCENTILES_FILE}: build it with benchmarks.build_fluency_percentiles"
            )
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                tuple(record["bounds"]),
                tuple(tuple(float(v) for v in p) for p in record["points"]),
                str(record.get("described", "")),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: not a percentile table ({error})") from None
