"""Fit coherence_fluency's constants and weights, and write them into the reader's folder (``fusion.json``).

    python -m benchmarks.union_dev_suite --checkpoint default --long-stories windows --scores-dir outputs/scores
    python -m benchmarks.fit_fluency_fusion outputs/fluency-reader --union-scores outputs/scores/default.json \\
        --scores-dir outputs/scores

1. **Constants**: each part's mean and standard deviation on the held-back human stories of the
   development suite (``benchmarks.dev_split``: ROC, and WritingPrompts read whole), never trained
   on: ``union`` is the logit of UNION's shipped default's P(human-written) (kept by the suite's
   ``--scores-dir``), ``fluency`` the reader's mean sentence logit (computed here, and kept).
2. **Weights**: the fused score is ``(1 - w) * z_union + w * z_fluency``; ``w`` on a grid of 0.05
   maximises the mean of the suite's eight figures (Pearson on ROC-400, WP-200, both dev-300 and
   both MANS halves; pair accuracy on the ROC and WP held-back pairs).
3. **Leave one set out**: each of the eight is held out in turn (each MANS half as two folds of its
   prompts), ``w`` fitted on the rest, and the held-out figure reported at that ``w``: how the fit
   carries to a set it did not see.

Prints the table as markdown (the card and RESULTS take it) and writes ``fusion.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from collections.abc import Callable, Mapping, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.union_dev_suite import (  # noqa: E402
    RatedSet,
    pair_sets,
    rated_sets,
    read_kept_scores,
    texts_digest,
)
from story_quality.evaluation.correlation import coefficient  # noqa: E402
from story_quality.fluency.fusion import Fusion, PartScale, union_logit  # noqa: E402
from story_quality.fluency.reader import FluencyReader  # noqa: E402

GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
HUMAN_KEYS = ("ROC held-back pairs: human", "WP whole-story pairs: human")
PAIR_FIGURES = ("ROC held-back pairs", "WP held-back pairs")
Parts = dict[str, dict[str, np.ndarray]]  # set key -> part -> values


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(coefficient(x, y, "pearson"))


def reader_scores(reader: FluencyReader, texts: Mapping[str, list[str]], kept: pathlib.Path | None) -> dict:
    """The reader's mean sentence logit of every set's texts (read back from ``kept`` when it holds them)."""
    stored = json.loads(kept.read_text(encoding="utf-8")) if kept is not None and kept.is_file() else {}
    for key, set_texts in texts.items():
        if stored.get(key, {}).get("texts_sha256") != texts_digest(set_texts):
            means = [story.mean_logit for story in reader.read(set_texts)]
            stored[key] = {"texts_sha256": texts_digest(set_texts), "scores": means}
            print(f"read {key}: {len(set_texts)} texts", file=sys.stderr)
    if kept is not None:
        kept.write_text(json.dumps(stored), encoding="utf-8")
    return {key: np.asarray(stored[key]["scores"], dtype=float) for key in texts}


def constants(parts: Parts) -> dict[str, tuple[float, float]]:
    """Each part's mean and standard deviation over the held-back human stories."""
    return {
        name: (float(np.mean(values)), float(np.std(values, ddof=1)))
        for name in ("union", "fluency")
        for values in [np.concatenate([parts[key][name] for key in HUMAN_KEYS])]
    }


def fused(parts: Mapping[str, np.ndarray], scale: Mapping[str, tuple[float, float]], w: float) -> np.ndarray:
    z = {name: (parts[name] - mean) / std for name, (mean, std) in scale.items()}
    return (1 - w) * z["union"] + w * z["fluency"]


def units(rated: Sequence[RatedSet]) -> dict[str, tuple[str, np.ndarray | None]]:
    """The units left out in turn: each figure's set, a MANS half as two folds of its prompts (by
    the prompt's order of first appearance, even and odd)."""
    out: dict[str, tuple[str, np.ndarray | None]] = {}
    for rated_set in rated:
        if rated_set.systems is None:
            out[rated_set.name] = (rated_set.name, None)
            continue
        prompts = [story.split(" . ")[0] for story in rated_set.stories]
        order = {prompt: i for i, prompt in enumerate(dict.fromkeys(prompts))}
        folds = np.array([order[prompt] % 2 for prompt in prompts])
        for fold in (0, 1):
            out[f"{rated_set.name} fold {fold}"] = (rated_set.name, folds == fold)
    for name in PAIR_FIGURES:
        out[name] = (name, None)
    return out


def unit_figure(
    unit: tuple[str, np.ndarray | None],
    score: Callable[[str], np.ndarray],
    humans: Mapping[str, np.ndarray],
) -> float:
    """A unit's figure from a scoring of the suite's texts: Pearson with the ratings, or pair accuracy."""
    name, mask = unit
    if name in PAIR_FIGURES:
        return float(np.mean(score(f"{name}: human") > score(f"{name}: corrupted")))
    values, ratings = score(name), humans[name]
    return pearson(values[mask], ratings[mask]) if mask is not None else pearson(values, ratings)


def mean_figure(names: Sequence[str], all_units: Mapping, score: Callable, humans: Mapping) -> float:
    """The mean over the eight figures of the units in ``names`` (a MANS half's folds share one place)."""
    by_set: dict[str, list[float]] = {}
    for name in names:
        by_set.setdefault(all_units[name][0], []).append(unit_figure(all_units[name], score, humans))
    return float(np.mean([np.mean(values) for values in by_set.values()]))


def best_weight(
    names: Sequence[str], all_units: Mapping, parts: Parts, scale: Mapping, humans: Mapping
) -> float:
    figures = [
        mean_figure(names, all_units, lambda key, w=w: fused(parts[key], scale, w), humans) for w in GRID
    ]
    return float(GRID[int(np.argmax(figures))])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "reader", type=pathlib.Path, help="the fluency reader's folder (fusion.json is written here)"
    )
    parser.add_argument("--union-scores", type=pathlib.Path, required=True,
                        help="the suite's kept scores of UNION's shipped default (--scores-dir, read in windows)")  # fmt: skip
    parser.add_argument("--scores-dir", type=pathlib.Path, help="keep the reader's scores here")
    parser.add_argument("--dry-run", action="store_true", help="print the table, write no fusion.json")
    args = parser.parse_args(argv)
    rated, pairs = rated_sets(), pair_sets()
    texts: dict[str, list[str]] = {s.name: s.stories for s in rated}
    for pair_set in pairs:
        texts.update([pair_set.human_texts(), pair_set.corrupted_texts()])
    union_kept = read_kept_scores(args.union_scores)
    for key, set_texts in texts.items():
        if key not in union_kept or union_kept[key]["texts_sha256"] != texts_digest(set_texts):
            parser.error(f"{args.union_scores} keeps no scores of this suite's {key!r}: run the suite again")
    kept = None
    if args.scores_dir is not None:
        args.scores_dir.mkdir(parents=True, exist_ok=True)
        kept = args.scores_dir / f"fluency-{args.reader.name}.json"
    fluency = reader_scores(FluencyReader(args.reader), texts, kept)
    parts: Parts = {
        key: {"union": np.array([union_logit(p) for p in union_kept[key]["scores"]]), "fluency": fluency[key]}
        for key in texts
    }
    humans = {s.name: s.human for s in rated}
    scale = constants(parts)
    all_units = units(rated)
    names = list(all_units)
    w_all = best_weight(names, all_units, parts, scale, humans)

    rows = [
        "| figure | UNION alone | reader alone | fused at w fitted on the rest (w) | fused at the shipped w |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        rest = [other for other in names if other != name]
        w = best_weight(rest, all_units, parts, scale, humans)
        cells = [
            unit_figure(all_units[name], lambda key, v=v: fused(parts[key], scale, v), humans)
            for v in (0.0, 1.0, w, w_all)
        ]
        rows.append(
            f"| {name} | {cells[0]:.3f} | {cells[1]:.3f} | {cells[2]:.3f} ({w:.2f}) | {cells[3]:.3f} |"
        )
    means = [
        mean_figure(names, all_units, lambda key, v=v: fused(parts[key], scale, v), humans)
        for v in (0.0, 1.0, w_all)
    ]
    rows.append(f"| mean of eight | {means[0]:.4f} | {means[1]:.4f} | | {means[2]:.4f} |")
    fusion = Fusion(
        {
            "union": PartScale(*scale["union"], weight=round(1 - w_all, 4)),
            "fluency": PartScale(*scale["fluency"], weight=round(w_all, 4)),
        },
        fitted_on="held-back human ROC and whole WritingPrompts stories (constants); the development suite's "
        "eight figures (weights), by benchmarks/fit_fluency_fusion.py",
    )
    print("\n".join([f"`python -m benchmarks.fit_fluency_fusion {args.reader.name}`", "", describe_machine(), "",
                     f"constants: {json.dumps(fusion.to_dict()['parts'])}", "", *rows]))  # fmt: skip
    if not args.dry_run:
        print(f"wrote {fusion.write(args.reader)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
