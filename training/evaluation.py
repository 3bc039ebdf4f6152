"""Evaluation of a story metric against people: one home for training runs and benchmarks.

- **Readers** of UNION's human-annotation files and of any metric's per-story scores. UNION
  released its judgements as ``ID ||| story ||| v1 v2 ... v7`` (one 0/1 vote per annotator,
  1 = reasonable) and, for ROCStories, a twin file with each annotator's *error code* in place of
  the vote (0 reasonable, 1 repeated plot, 2 poor coherence, 3 conflicting logic, 4 chaotic
  scene, 5 other). Scores are aligned with the annotation file by position, so every reader is
  strict: a malformed line is an error naming its line number, never a silently skipped story
  that would shift every later score onto the wrong story.
- **Correlation statistics**. Pearson, Spearman and Kendall (tau-b) come from SciPy, exactly as
  UNION's own evaluation computed them, so the published figures reproduce to the fourth
  decimal. SciPy has no test for whether one metric correlates *significantly* better than
  another on the same stories; GRUEN (after Graham & Baldwin, 2014) uses Williams' (1959)
  t-test for two dependent correlations that share one variable (the human score),
  implemented below from its formula.
- **Scoring** stories with a checkpoint through the ``union`` metric itself: what users get,
  to the digit.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy import stats

FIELD_SEPARATOR = "|||"
ERROR_TYPES: dict[int, str] = {
    0: "reasonable",
    1: "repeated plot",
    2: "poor coherence",
    3: "conflicting logic",
    4: "chaotic scene",
    5: "other",
}


class AnnotationFormatError(ValueError):
    """A line of an annotation or score file that cannot be read; the message names the line."""


@dataclass(frozen=True)
class AnnotatedStories:
    """The stories, their 0/1 votes (stories x annotators) and optional error codes (same shape)."""

    ids: tuple[str, ...]
    stories: tuple[str, ...]
    votes: np.ndarray
    error_codes: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def human_scores(self) -> np.ndarray:
        """Mean vote per story, in [0, 1]: the human score UNION's paper correlates with."""
        return self.votes.mean(axis=1)

    @property
    def is_reasonable(self) -> np.ndarray:
        """True where a strict majority of annotators voted "reasonable"."""
        return self.votes.sum(axis=1) * 2 > self.votes.shape[1]


def _content_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line; only blank lines at the very end are tolerated."""
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise AnnotationFormatError(f"{path}: the file is empty")
    return [(number, line) for number, line in enumerate(lines, start=1)]


def _parse_record(
    path: Path, number: int, line: str, allowed: range, what: str
) -> tuple[str, str, list[int]]:
    fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
    if len(fields) != 3:
        raise AnnotationFormatError(
            f"{path}:{number}: expected 'ID ||| story ||| {what}' (3 fields), found {len(fields)} field(s)"
        )
    story_id, story, labels = fields
    if not story_id:
        raise AnnotationFormatError(f"{path}:{number}: the story ID is empty")
    if not story:
        raise AnnotationFormatError(f"{path}:{number}: the story text is empty")
    tokens = labels.split()
    if not tokens:
        raise AnnotationFormatError(f"{path}:{number}: no {what} after the second '|||'")
    values = []
    for token in tokens:
        if not token.isdigit() or int(token) not in allowed:
            raise AnnotationFormatError(
                f"{path}:{number}: {what} must be integers in {allowed.start}..{allowed.stop - 1}, found {token!r}"
            )
        values.append(int(token))
    return story_id, story, values


def _read_records(path: Path, allowed: range, what: str) -> tuple[list[str], list[str], np.ndarray]:
    ids: list[str] = []
    stories: list[str] = []
    rows: list[list[int]] = []
    seen: dict[str, int] = {}
    for number, line in _content_lines(path):
        story_id, story, values = _parse_record(path, number, line, allowed, what)
        if rows and len(values) != len(rows[0]):
            raise AnnotationFormatError(
                f"{path}:{number}: {len(values)} {what}, but line 1 has {len(rows[0])} (one per annotator)"
            )
        if story_id in seen:
            raise AnnotationFormatError(
                f"{path}:{number}: story ID {story_id!r} already used on line {seen[story_id]}"
            )
        seen[story_id] = number
        ids.append(story_id)
        stories.append(story)
        rows.append(values)
    return ids, stories, np.asarray(rows, dtype=np.int64)


def read_annotations(path: str | Path, error_types_path: str | Path | None = None) -> AnnotatedStories:
    """Read ``ID ||| story ||| votes`` and, optionally, the matching error-code file.

    The error-code file must describe the same stories in the same order, and each annotator's
    code must agree with their vote (code 0 exactly where the vote is 1); anything else means the
    two files do not belong together.
    """
    path = Path(path)
    ids, stories, votes = _read_records(path, range(0, 2), "votes")
    codes = None
    if error_types_path is not None:
        codes_path = Path(error_types_path)
        code_ids, code_stories, codes = _read_records(codes_path, range(0, len(ERROR_TYPES)), "error codes")
        if len(code_ids) != len(ids):
            raise AnnotationFormatError(f"{codes_path}: {len(code_ids)} stories, but {path} has {len(ids)}")
        if codes.shape != votes.shape:
            raise AnnotationFormatError(
                f"{codes_path}: {codes.shape[1]} error codes per story, but {path} has {votes.shape[1]} votes"
            )
        for row, (vote_id, code_id, story, code_story) in enumerate(
            zip(ids, code_ids, stories, code_stories, strict=True)
        ):
            if vote_id != code_id or story != code_story:
                raise AnnotationFormatError(
                    f"{codes_path}:{row + 1}: story {code_id!r} does not match line {row + 1} of {path} ({vote_id!r})"
                )
            if not np.array_equal(codes[row] == 0, votes[row] == 1):
                raise AnnotationFormatError(
                    f"{codes_path}:{row + 1}: error codes {codes[row].tolist()} disagree with the votes "
                    f"{votes[row].tolist()} (code 0 must appear exactly where the vote is 1)"
                )
    return AnnotatedStories(tuple(ids), tuple(stories), votes, codes)


def _checked_scores(values: Sequence[object], source: str, expected: int | None, unit: str) -> np.ndarray:
    scores = []
    for position, value in enumerate(values, start=1):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AnnotationFormatError(
                f"{source}: {unit} {position}: expected a finite number, found {value!r}"
            )
        scores.append(float(value))
    if expected is not None and len(scores) != expected:
        raise AnnotationFormatError(
            f"{source}: {len(scores)} scores, but there are {expected} annotated stories"
        )
    return np.asarray(scores, dtype=np.float64)


def read_scores(path: str | Path, expected: int | None = None) -> np.ndarray:
    """One metric's scores: a text file with one number per line, or a ``.json`` list.

    A JSON object with a ``"scores"`` list (what most `evaluate` metrics return) is accepted too.
    ``expected`` is the number of annotated stories the scores must align with.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "scores" in data:
            data = data["scores"]
        if not isinstance(data, list):
            raise AnnotationFormatError(
                f"{path}: expected a JSON list of numbers or an object with a 'scores' list"
            )
        return _checked_scores(data, str(path), expected, "item")
    values: list[object] = []
    for number, line in _content_lines(path):
        text = line.strip()
        try:
            values.append(float(text))
        except ValueError:
            raise AnnotationFormatError(
                f"{path}:{number}: expected one number per line, found {text!r}"
            ) from None
    return _checked_scores(values, str(path), expected, "line")


# --- correlation statistics ----------------------------------------------------------------

Method = Literal["pearson", "spearman", "kendall"]
Alternative = Literal["greater", "less", "two-sided"]
METHODS: tuple[Method, ...] = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Correlation:
    """The three coefficients with their p-values (H0: no correlation) on ``n`` stories."""

    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float
    kendall: float
    kendall_p: float
    n: int

    def coefficient(self, method: Method) -> float:
        return getattr(self, method)


def _paired(scores: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    if scores.ndim != 1 or scores.shape != human.shape:
        raise ValueError(
            f"scores {scores.shape} and human scores {human.shape} must be equal-length 1-D vectors"
        )
    if len(scores) < 3:
        raise ValueError(f"need at least 3 stories to correlate, got {len(scores)}")
    return scores, human


def coefficient(scores: np.ndarray, human: np.ndarray, method: Method) -> float:
    """One correlation coefficient; NaN (documented, not an error) when either side is constant."""
    return _correlate(scores, human, method)[0]


def _correlate(scores: np.ndarray, human: np.ndarray, method: Method) -> tuple[float, float]:
    scores, human = _paired(scores, human)
    if np.ptp(scores) == 0 or np.ptp(human) == 0:
        return math.nan, math.nan
    function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        result = function(scores, human)
    return float(result.statistic), float(result.pvalue)


def correlate(scores: np.ndarray, human: np.ndarray) -> Correlation:
    """Pearson, Spearman and Kendall tau-b of ``scores`` with ``human``, with two-sided p-values."""
    values = {method: _correlate(scores, human, method) for method in METHODS}
    return Correlation(
        pearson=values["pearson"][0],
        pearson_p=values["pearson"][1],
        spearman=values["spearman"][0],
        spearman_p=values["spearman"][1],
        kendall=values["kendall"][0],
        kendall_p=values["kendall"][1],
        n=len(scores),
    )


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' t with ``df = n - 3`` degrees of freedom and its p-value under ``alternative``."""

    t: float
    df: int
    p_value: float
    alternative: Alternative


def williams_test(
    r12: float, r13: float, r23: float, n: int, alternative: Alternative = "greater"
) -> WilliamsResult:
    """Is r12 (metric 1 vs human) different from r13 (metric 2 vs human), given r23 (metric 1 vs 2)?

    Williams (1959), in the form of Graham & Baldwin (2014)::

        t = (r12 - r13) * sqrt((n - 1)(1 + r23))
            / sqrt(2 K (n - 1)/(n - 3) + ((r12 + r13)/2)^2 (1 - r23)^3)
        K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23   (the determinant of the correlation matrix)

    t follows Student's t with n - 3 degrees of freedom. ``"greater"`` (the default, as in Graham &
    Baldwin and GRUEN) tests H1: r12 > r13, i.e. "metric 1 correlates better".
    """
    if n <= 3:
        raise ValueError(f"the Williams test needs n > 3 stories, got n={n}")
    for name, value in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1.0 <= value <= 1.0:
            raise ValueError(f"{name}={value} is not a correlation in [-1, 1]")
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}")
    determinant = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if determinant < -1e-12:
        raise ValueError(f"r12={r12}, r13={r13}, r23={r23} cannot all hold at once (negative determinant)")
    determinant = max(determinant, 0.0)
    df = n - 3
    if r12 == r13:
        t = 0.0
    else:
        variance = 2 * determinant * (n - 1) / (n - 3) + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
        if variance <= 0:
            raise ValueError(
                f"r12={r12}, r13={r13}, r23={r23}: degenerate correlations, Williams' t is undefined"
            )
        t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(variance)
    if alternative == "greater":
        p_value = float(stats.t.sf(t, df))
    elif alternative == "less":
        p_value = float(stats.t.cdf(t, df))
    else:
        p_value = float(min(1.0, 2 * stats.t.sf(abs(t), df)))
    return WilliamsResult(t=t, df=df, p_value=p_value, alternative=alternative)


def compare_metrics(
    scores_1: np.ndarray,
    scores_2: np.ndarray,
    human: np.ndarray,
    method: Method = "pearson",
    alternative: Alternative = "greater",
) -> WilliamsResult:
    """Williams test of "metric 1 correlates better with ``human`` than metric 2" on the same stories."""
    r12 = coefficient(scores_1, human, method)
    r13 = coefficient(scores_2, human, method)
    r23 = coefficient(scores_1, scores_2, method)
    if math.isnan(r12) or math.isnan(r13) or math.isnan(r23):
        raise ValueError("the Williams test is undefined when a metric or the human score is constant")
    return williams_test(r12, r13, r23, len(human), alternative)


# --- scoring --------------------------------------------------------------------------------


def score_stories(
    checkpoint: str | os.PathLike, stories: Sequence[str], batch_size: int = 32, device: Any = None
) -> list[float]:
    """The ``union`` metric's scores of ``stories`` under a local checkpoint folder."""
    import evaluate

    from story_quality import metric_path

    evaluate.logging.disable_progress_bar()
    metric = evaluate.load(metric_path("union"), os.path.abspath(checkpoint))
    kwargs = {"device": str(device)} if device is not None else {}
    return metric.compute(predictions=list(stories), batch_size=batch_size, **kwargs)["scores"]


def write_scores(path: str | os.PathLike, scores: Sequence[float]) -> None:
    """One score per line, in annotation order: the format :func:`read_scores` reads."""
    Path(path).write_text("\n".join(f"{s:.8f}" for s in scores) + "\n")
