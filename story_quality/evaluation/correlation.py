"""Correlation with people: how well a metric's scores agree with human ratings, for training runs and benchmarks.

- **Correlation statistics**. Pearson, Spearman and Kendall (tau-b) come from SciPy, exactly as
  UNION's own evaluation computed them, so the published figures reproduce to the fourth
  decimal. SciPy has no test for whether one metric correlates *significantly* better than
  another on the same stories; GRUEN (after Graham & Baldwin, 2014) uses Williams' (1959)
  t-test for two dependent correlations that share one variable (the human score),
  implemented below from its formula.

The annotation and score files these figures are computed from are read by
:mod:`story_quality.evaluation.annotations`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

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
