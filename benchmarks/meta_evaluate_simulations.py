"""How ``story-quality meta-evaluate``'s statistics behave on simulated data where the truth is known.

    python -m benchmarks.meta_evaluate_simulations                 # the log's figures
    python -m benchmarks.meta_evaluate_simulations --simulations 100 --resamples 100   # quicker

- **Coverage**: stories drawn from a bivariate normal with correlation 0.5; the share of the
  pooled Pearson's 95 % bootstrap intervals that contain 0.5.
- **False positives**: two metrics equally good by construction (each the rating plus independent
  noise of the same size); the share of PERM-BOTH p-values below 0.05, for pooled Pearson, pooled
  Kendall and tie-calibrated pairwise accuracy, without systems and with 4 systems x 10 prompts
  (the metric's noise shared inside a system, as a generator's style would be).

The tests (``tests/evaluation/test_meta_statistics.py``) run the same checks smaller.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from benchmarks.machine import describe_machine
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation import meta_figures
from story_quality.evaluation.meta_statistics import Design, bootstrap, interval_of, permutation_test

NAMES = ["pooled.pearson", "pooled.kendall", "pairwise.tie_calibrated"]


def coverage(simulations: int, resamples: int, n: int = 60, rho: float = 0.5) -> float:
    rng = np.random.default_rng(6)
    covered = 0
    for simulation in range(simulations):
        human = rng.normal(size=n)
        metric = rho * human + math.sqrt(1 - rho**2) * rng.normal(size=n)
        samples = bootstrap([metric], Design(human), ["pooled.pearson"], resamples, seed=simulation)
        estimate = interval_of(meta_figures.pearson(metric, human), samples[:, 0, 0], 0.95)
        covered += estimate.low <= rho <= estimate.high
    return covered / simulations


def false_positives(simulations: int, resamples: int, with_systems: bool) -> dict[str, float]:
    rng = np.random.default_rng(8)
    systems, groups = np.repeat(np.arange(4), 10), np.tile(np.arange(10), 4)
    rejected = np.zeros(len(NAMES))
    for simulation in range(simulations):
        human = rng.normal(size=40) + (0.5 * systems if with_systems else 0)
        style = (lambda: rng.normal(size=4)[systems]) if with_systems else (lambda: 0.0)
        a = human + style() + rng.normal(size=40)
        b = human + style() + rng.normal(size=40)
        design = Design(human, systems, groups) if with_systems else Design(human)
        rejected += permutation_test(a, b, design, NAMES, resamples, seed=simulation) < 0.05
    return {name: float(rate) for name, rate in zip(NAMES, rejected / simulations, strict=True)}


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args()
    result = {
        "machine": describe_machine(),
        "simulations": args.simulations,
        "resamples": args.resamples,
        "coverage_pooled_pearson_95": coverage(args.simulations, args.resamples),
        "false_positives_at_0.05_items": false_positives(args.simulations, args.resamples, False),
        "false_positives_at_0.05_systems_and_prompts": false_positives(
            args.simulations, args.resamples, True
        ),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
