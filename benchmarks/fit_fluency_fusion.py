"""Fit coherence_fluency's constants and weights, and write them into the reader's folder (``fusion.json``).

    python -m benchmarks.union_dev_suite --checkpoint default --long-stories windows --scores-dir outputs/scores
    python -m benchmarks.fit_fluency_fusion outputs/fluency-reader --union-scores outputs/scores/default.json \\
        --scores-dir outputs/scores

1. **Constants**: each part's mean and standard deviation on the held-back human stories of the
   development suite (``benchmarks.dev_split``: ROC, and WritingPrompts read whole), never trained
   on: ``union`` is UNION's shipped default's P(human-written) (kept by the suite's
   ``--scores-dir``), ``fluency`` the reader's story score (``--story-score``: by default a fluency
   reader's mean sentence logit; a SLOR reader's mean SLOR; computed here, and kept).
2. **Weights**: the fused score of a story is ``(1 - w) * z_union + w * z_fluency``, with one ``w``
   per length regime, fixed before any fit from the forms stories take: at most 100 words (a
   ROCStories story), at most 300 (a WritingPrompts story as UNION and OpenMEVA cut it), longer
   (a whole story). The ``w`` of each regime, on a grid of 0.1, maximise together the mean of the
   suite's eight figures (Pearson on ROC-400, WP-200, both dev-300 and both MANS halves; pair
   accuracy on the ROC and WP held-back pairs); a regime that fewer than 50 stories of the fit
   fall in keeps 0 (UNION alone).
3. **Leave one set out**: each of the eight is held out in turn (each MANS half as two folds of its
   prompts), ``w`` fitted on the rest, and the held-out figure reported at that ``w``: how the fit
   carries to a set it did not see.

Prints the table as markdown (the card and RESULTS take it) and writes ``fusion.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import sys
from collections.abc import Callable, Mapping, Sequence

from story_quality.cli.flag_spellings import ScriptParser

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from benchmarks.dev_sets import (  # noqa: E402
    RatedSet,
    pair_sets,
    rated_sets,
    read_kept_scores,
    texts_digest,
)
from benchmarks.machine import describe_machine  # noqa: E402
from story_quality.evaluation import meta_figures  # noqa: E402
from story_quality.fluency.fusion import Fusion, PartScale, Regime, story_words  # noqa: E402
from story_quality.fluency.percentiles import PercentileTable  # noqa: E402
from story_quality.fluency.reader import is_fluency_reader  # noqa: E402
from story_quality.fluency.story_scores import (  # noqa: E402
    STORY_SCORES,
    StorySentences,
    read_stories,
    sentence_scorer,
    story_score,
)

GRID = np.round(np.arange(0.0, 1.0001, 0.1), 1)
REGIME_WORDS = (100, 300, None)  # the most words of a story in each regime (None: any length)
MIN_REGIME_STORIES = 50  # a regime with fewer stories in the fit keeps w = 0 (UNION alone)
HUMAN_KEYS = ("ROC held-back pairs: human", "WP whole-story pairs: human")
PAIR_FIGURES = ("ROC held-back pairs", "WP held-back pairs")
Parts = dict[str, dict[str, np.ndarray]]  # set key -> part -> values


def reader_scores(
    reader: pathlib.Path, kind: str, texts: Mapping[str, list[str]], kept: pathlib.Path | None
) -> dict:
    """The reader's story score ``kind`` of every set's texts, from each story's sentence scores
    (read back from ``kept`` when it holds them)."""
    stored = json.loads(kept.read_text(encoding="utf-8")) if kept is not None and kept.is_file() else {}
    score = None
    for key, set_texts in texts.items():
        if stored.get(key, {}).get("texts_sha256") != texts_digest(set_texts):
            score = score or sentence_scorer(reader)
            stories = read_stories(score, set_texts)
            stored[key] = {
                "texts_sha256": texts_digest(set_texts),
                "sentence_scores": [list(story.scores) for story in stories],
                "lengths": [list(story.lengths) for story in stories],
            }
            print(f"read {key}: {len(set_texts)} texts", file=sys.stderr)
    if kept is not None:
        kept.write_text(json.dumps(stored), encoding="utf-8")
    table = PercentileTable.read(reader) if kind.endswith("percentile") else None
    return {
        key: np.asarray(
            [
                story_score(StorySentences(tuple(scores), tuple(lengths)), kind, table)
                for scores, lengths in zip(
                    stored[key]["sentence_scores"], stored[key]["lengths"], strict=True
                )
            ],
            dtype=float,
        )
        for key in texts
    }


def constants(parts: Parts) -> dict[str, tuple[float, float]]:
    """Each part's mean and standard deviation over the held-back human stories."""
    return {
        name: (float(np.mean(values)), float(np.std(values, ddof=1)))
        for name in ("union", "fluency")
        for values in [np.concatenate([parts[key][name] for key in HUMAN_KEYS])]
    }


def regime_of(words: np.ndarray) -> np.ndarray:
    """Each story's regime: the first of :data:`REGIME_WORDS` that holds its number of words."""
    bounds = [b for b in REGIME_WORDS if b is not None]
    return np.searchsorted(np.asarray(bounds), words, side="left")


def fused(
    parts: Mapping[str, np.ndarray], scale: Mapping[str, tuple[float, float]], w: Sequence[float]
) -> np.ndarray:
    z = {name: (parts[name] - mean) / std for name, (mean, std) in scale.items()}
    weight = np.asarray(w)[parts["regime"]]
    return (1 - weight) * z["union"] + weight * z["fluency"]


def units(rated: Sequence[RatedSet]) -> dict[str, tuple[str, np.ndarray | None]]:
    """The units left out in turn: each figure's set, a MANS half as two folds of its prompts (by
    the prompt's order of first appearance in the file, even and odd)."""
    out: dict[str, tuple[str, np.ndarray | None]] = {}
    for rated_set in rated:
        if rated_set.systems is None:
            out[rated_set.name] = (rated_set.name, None)
            continue
        prompts = rated_set.prompts or rated_set.systems
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
    return (
        meta_figures.pearson(values[mask], ratings[mask])
        if mask is not None
        else meta_figures.pearson(values, ratings)
    )


def mean_figure(names: Sequence[str], all_units: Mapping, score: Callable, humans: Mapping) -> float:
    """The mean over the eight figures of the units in ``names`` (a MANS half's folds share one place)."""
    by_set: dict[str, list[float]] = {}
    for name in names:
        by_set.setdefault(all_units[name][0], []).append(unit_figure(all_units[name], score, humans))
    return float(np.mean([np.mean(values) for values in by_set.values()]))


def best_weights(
    names: Sequence[str], all_units: Mapping, parts: Parts, scale: Mapping, humans: Mapping
) -> tuple[float, ...]:
    """The regimes' weights that maximise the mean figure of ``names``; a regime that none of their
    stories falls in keeps 0."""
    counts = np.zeros(len(REGIME_WORDS), dtype=int)
    for name in names:
        key, mask = all_units[name]
        for k in [f"{key}: human", f"{key}: corrupted"] if key in PAIR_FIGURES else [key]:
            regimes = parts[k]["regime"] if mask is None else parts[k]["regime"][mask]
            counts += np.bincount(regimes, minlength=len(REGIME_WORDS))
    grids = [GRID if count >= MIN_REGIME_STORIES else np.zeros(1) for count in counts]
    best, best_figure = (0.0,) * len(REGIME_WORDS), -np.inf
    for w in itertools.product(*grids):
        figure = mean_figure(names, all_units, lambda key, w=w: fused(parts[key], scale, w), humans)
        if figure > best_figure + 1e-12:
            best, best_figure = tuple(float(v) for v in w), figure
    return best


def alone_table(rated: Sequence[RatedSet], readers: Mapping[str, Callable[[str], np.ndarray]]) -> list[str]:
    """Each reader alone on each rated set: pooled Pearson, and on a MANS half the mean within-system
    Pearson and the mean per-prompt Kendall (the meta-evaluation's figures)."""
    rows = ["| reader alone | " + " | ".join(s.name for s in rated) + " |", "|---" * (len(rated) + 1) + "|"]
    for name, score in readers.items():
        cells = []
        for rated_set in rated:
            values, human = score(rated_set.name), rated_set.human
            cell = f"{meta_figures.pearson(values, human):+.3f}"
            if rated_set.systems is not None and rated_set.prompts is not None:
                systems = np.unique(np.asarray(rated_set.systems), return_inverse=True)[1]
                prompts = np.unique(np.asarray(rated_set.prompts), return_inverse=True)[1]
                within, per_prompt = meta_figures.compute(
                    values, human, systems, prompts, ["within_system.pearson", "group.kendall"]
                )
                cell += f" (within {within:+.3f}, per prompt {per_prompt:+.3f})"
            cells.append(cell)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "reader", type=pathlib.Path, help="the fluency reader's folder (fusion.json is written here)"
    )
    parser.add_argument("--union-scores", type=pathlib.Path, required=True,
                        help="the suite's kept scores of UNION's shipped default (--scores-dir, read in windows)")  # fmt: skip
    parser.add_argument("--scores-dir", type=pathlib.Path, help="keep the reader's scores here")
    parser.add_argument("--dry-run", action="store_true", help="print the table, write no fusion.json")
    parser.add_argument("--story-score", choices=STORY_SCORES, default="mean",
                        help="the story's fluency from its sentences' scores (story_quality.fluency."
                        "story_scores); the percentile ones read the folder's percentiles.json")  # fmt: skip
    return parser


def suite_parts(parser: argparse.ArgumentParser, args: argparse.Namespace, rated, pairs) -> Parts:
    """Every text list of the suite with its two parts (UNION's kept scores, the reader's) and regimes."""
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
        kept = args.scores_dir / f"sentences-{args.reader.name}.json"
    fluency = reader_scores(args.reader, args.story_score, texts, kept)
    return {
        key: {
            "union": np.asarray(union_kept[key]["scores"], dtype=float),
            "fluency": fluency[key],
            "regime": regime_of(np.array([story_words(text) for text in texts[key]])),
        }
        for key in texts
    }


def figure_rows(rated, parts: Parts, scale: Mapping, w_all: Sequence[float]) -> list[str]:
    """The table: each unit left out in turn, the means of eight, the MANS halves whole."""
    humans = {s.name: s.human for s in rated}
    all_units = units(rated)
    names = list(all_units)
    columns = {"UNION": (0.0,) * len(REGIME_WORDS), "reader": (1.0,) * len(REGIME_WORDS), "fused": w_all}

    def at(weights: Sequence[float]) -> Callable[[str], np.ndarray]:
        return lambda key: fused(parts[key], scale, weights)

    rows = [
        "| figure | UNION alone | reader alone | fused, w fitted on the rest (w) | fused at the shipped w |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        w = best_weights([other for other in names if other != name], all_units, parts, scale, humans)
        cells = [
            unit_figure(all_units[name], at(v), humans)
            for v in (columns["UNION"], columns["reader"], w, w_all)
        ]
        shown = "/".join(f"{v:.1f}" for v in w)
        rows.append(
            f"| {name} | {cells[0]:.3f} | {cells[1]:.3f} | {cells[2]:.3f} ({shown}) | {cells[3]:.3f} |"
        )
    whole = {s.name: (s.name, None) for s in rated} | {name: (name, None) for name in PAIR_FIGURES}
    for label, units_of in (
        ("a MANS half: its folds' mean", all_units),
        ("the ship rule's: each set whole", whole),
    ):
        means = [mean_figure(list(units_of), units_of, at(v), humans) for v in columns.values()]
        rows.append(f"| mean of eight ({label}) | {means[0]:.4f} | {means[1]:.4f} | | {means[2]:.4f} |")
    for rated_set in rated:
        if rated_set.systems is not None:
            figures = [unit_figure(whole[rated_set.name], at(v), humans) for v in columns.values()]
            rows.append(
                f"| {rated_set.name}, whole | {figures[0]:.3f} | {figures[1]:.3f} | | {figures[2]:.3f} |"
            )
    readers = {"UNION": lambda key: parts[key]["union"], "reader": lambda key: parts[key]["fluency"]}
    return [*rows, "", *alone_table(rated, readers)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.dry_run and (args.story_score != "mean" or not is_fluency_reader(args.reader)):
        parser.error(
            f"{args.reader} --story-score {args.story_score}: coherence_fluency fuses a fluency reader's "
            "mean sentence logit only; judge other readers with --dry-run"
        )
    rated, pairs = rated_sets(), pair_sets()
    parts = suite_parts(parser, args, rated, pairs)
    scale = constants(parts)
    all_units = units(rated)
    w_all = best_weights(list(all_units), all_units, parts, scale, {s.name: s.human for s in rated})
    fusion = Fusion(
        {name: PartScale(*scale[name]) for name in ("union", "fluency")},
        tuple(
            Regime(most, {"union": round(1 - w, 4), "fluency": round(w, 4)})
            for most, w in zip(REGIME_WORDS, w_all, strict=True)
        ),
        fitted_on="held-back human ROC and whole WritingPrompts stories (constants); the development suite's "
        "eight figures (weights), by benchmarks/fit_fluency_fusion.py",
    )
    print("\n".join([f"`python -m benchmarks.fit_fluency_fusion {args.reader.name} --story-score {args.story_score}`", "", describe_machine(), "",
                     f"constants: {json.dumps(fusion.to_dict())}", "",
                     "weights: the w of stories of at most 100 / 300 / more words", "",
                     *figure_rows(rated, parts, scale, w_all)]))  # fmt: skip
    if not args.dry_run:
        print(f"wrote {fusion.write(args.reader)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
