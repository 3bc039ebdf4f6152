"""The development suite's sets, read from the shared data: UNION's annotated stories, the MANPLTS
and MANS ratings, and the held-back human stories each paired with a corrupted copy; and the
scores ``union_dev_suite --scores-dir`` keeps of them. Every script that judges a reader on the
suite reads its sets here (``union_dev_suite``, ``fit_fluency_fusion``, ``compare_example``).
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import datasets
import numpy as np

from benchmarks.dev_split import roc_stories, wp_rows
from benchmarks.shared_data import shared_data
from story_quality.evaluation import meta_figures
from story_quality.evaluation.annotations import read_annotations
from story_quality.evaluation.correlation import METHODS
from story_quality.evaluation.meta_statistics import Design, rater_ceiling
from story_quality.training.corpora import writing_prompts_segments, writing_prompts_text
from story_quality.training.negatives.build import build_union_dataset
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.union.normalization import StoryNormalization

PAIR_SEED = 2026
# Held-back pairs keep case and names: each checkpoint's own normalisation lowercases and tags them.
PAIR_NORMALIZATION = StoryNormalization(roc_tokenize=True, plain_typography=True)
PAPER_UNION_ROC400 = {"pearson": 0.3687, "spearman": 0.4599, "kendall": 0.3386}
# The paper's WritingPrompts table: UNION trained on WP (272,600 stories) and trained on ROC only.
PAPER_UNION_WP200 = {"pearson": 0.3663, "spearman": 0.4493, "kendall": 0.3293}
PAPER_UNION_WP200_ROC_TRAINED = {"pearson": 0.2872, "spearman": 0.2935, "kendall": 0.2142}
WITHIN_SYSTEMS = "within-system pearson"
# The suite's figures, as ``story-quality meta-evaluate`` names them (story_quality.evaluation.meta_figures).
POOLED = [f"pooled.{method}" for method in METHODS]
# The row that gives the raters' own agreement, where a set lists each rater's rating.
CEILING = "raters' ceiling (each rater against the others' mean)"


@dataclass
class RatedSet:
    name: str
    stories: list[str]
    human: np.ndarray
    references: dict[str, dict[str, float]] = field(default_factory=dict)
    # The system that generated each story, where a set has several: its figures then add the
    # mean of the within-system Pearsons.
    systems: list[str] | None = None
    prompts: list[str] | None = None  # each story's prompt, where a prompt has several stories


@dataclass
class PairSet:
    name: str
    human: list[str]
    corrupted: list[str]

    def human_texts(self) -> tuple[str, list[str]]:
        """The human stories under the name their scores are kept by."""
        return f"{self.name}: human", self.human

    def corrupted_texts(self) -> tuple[str, list[str]]:
        """The corrupted copies under the name their scores are kept by."""
        return f"{self.name}: corrupted", self.corrupted


def scored_texts(rated: list[RatedSet], pairs: list[PairSet]) -> dict[str, list[str]]:
    """Every list of texts the suite scores, by the name its scores are kept under."""
    texts = {rated_set.name: rated_set.stories for rated_set in rated}
    for pair_set in pairs:
        texts.update([pair_set.human_texts(), pair_set.corrupted_texts()])
    return texts


def distinct_trigrams(text: str) -> float:
    """Distinct 3-grams over all 3-grams of the text's words (1.0 below three words): the
    meta-evaluation's baseline (:func:`story_quality.evaluation.meta_figures.distinct_trigram_scores`).

    >>> distinct_trigrams("a b c a b c"), distinct_trigrams("a b")
    (0.75, 1.0)
    """
    return float(meta_figures.distinct_trigram_scores([text])[0])


def system_codes(systems: Sequence[str]) -> np.ndarray:
    """Each story's system as a code 0..k-1 (the meta-evaluation's figures take codes)."""
    return np.unique(np.asarray(systems), return_inverse=True)[1]


def correlations_of(
    scores: Sequence[float], human: np.ndarray, systems: Sequence[str] | None = None
) -> dict[str, float]:
    """The three coefficients over every story; with ``systems``, also the mean of the Pearsons
    inside each system: the meta-evaluation's figures (``story-quality meta-evaluate``'s)."""
    scores = np.asarray(scores, dtype=float)
    found = meta_figures.compute(scores, human, None, None, POOLED)
    figures = dict(zip(METHODS, found.tolist(), strict=True))
    if systems is not None:
        codes = system_codes(systems)
        figures[WITHIN_SYSTEMS] = float(
            meta_figures.compute(scores, human, codes, None, ["within_system.pearson"])[0]
        )
    return figures


def raters_ceiling(raters: np.ndarray) -> dict[str, float]:
    """Each rater's Pearson, Spearman and Kendall with the mean of the other raters (stories x
    raters; NaN where a rater gave none), averaged over the raters: one more rater's agreement."""
    raters = np.asarray(raters, dtype=float)
    found = rater_ceiling(raters, Design(np.nanmean(raters, axis=1)), POOLED)
    return dict(zip(METHODS, found.tolist(), strict=True))


def with_baseline(
    name: str,
    stories: list[str],
    human: np.ndarray,
    refs: dict,
    systems: list[str] | None = None,
    raters: np.ndarray | None = None,
) -> RatedSet:
    trigrams = meta_figures.distinct_trigram_scores(stories)
    refs["distinct 3-grams (no model)"] = correlations_of(trigrams, human, systems)
    if raters is not None:
        refs[CEILING] = raters_ceiling(raters)
    return RatedSet(name, stories, human, refs, systems)


def mans_set(domain: str) -> RatedSet:
    """A MANS development half: its stories, mean ratings and systems, with the systems' own means as
    an oracle reference (how much of a pooled figure is telling the systems apart)."""
    with shared_data("dev-annotations", f"mans_{domain}_dev.jsonl").open(encoding="utf-8") as source:
        rows = [json.loads(line) for line in source if line.strip()]
    stories = [" ".join(row["text"].split()) for row in rows]
    human = np.array([row["human"] for row in rows], dtype=float)
    systems = [row["system"] for row in rows]
    oracle = meta_figures.mean_oracle(human, system_codes(systems))
    refs = {"each system's mean rating (oracle)": correlations_of(oracle, human)}
    rated = with_baseline(f"MANS-{domain.upper()} dev", stories, human, refs, systems)
    rated.prompts = [row["prompt"] for row in rows]
    return rated


def rated_sets() -> list[RatedSet]:
    data = shared_data("union-roc")
    annotated = read_annotations(data / "ant_data.txt")
    published = np.loadtxt(data / "metric_output" / "union.txt")
    sets = [
        with_baseline(
            "ROC-400 (UNION)",
            list(annotated.stories),
            annotated.human_scores,
            {
                "paper's UNION (Table 1)": PAPER_UNION_ROC400,
                "paper's UNION (released scores)": correlations_of(published, annotated.human_scores),
            },
            raters=annotated.votes,
        )
    ]
    annotated_wp = read_annotations(shared_data("union-wp", "ant_data.txt"))
    sets.append(
        with_baseline(
            "WP-200 (UNION)",
            list(annotated_wp.stories),
            annotated_wp.human_scores,
            {
                "paper's UNION (trained on WP)": PAPER_UNION_WP200,
                "paper's UNION trained on ROC": PAPER_UNION_WP200_ROC_TRAINED,
            },
            raters=annotated_wp.votes,
        )
    )
    for domain in ("roc", "wp"):
        with shared_data("dev-annotations", f"manplts_{domain}.jsonl").open(encoding="utf-8") as source:
            rows = [json.loads(line) for line in source if line.strip()]
        stories = [" ".join(row["text"].replace("</s>", " ").split()) for row in rows]
        human = np.array([row["mean"] for row in rows], dtype=float)
        refs = {"MANPLTS's own model": correlations_of([row["manplts_score"] for row in rows], human)}
        raters = np.array(
            [[math.nan if x is None else x for x in row["ratings"]] for row in rows], dtype=float
        )
        sets.append(with_baseline(f"{domain.upper()} dev-300 (MANPLTS)", stories, human, refs, raters=raters))
    return [*sets, mans_set("roc"), mans_set("wp")]


def pair_set(name: str, texts: list[str]) -> PairSet:
    built = build_union_dataset(
        datasets.Dataset.from_dict({"text": texts}),
        normalization=PAIR_NORMALIZATION,
        seed=PAIR_SEED,
        lexicon=Lexicon(tagger="heuristic", wordnet="none"),
    )
    human = {row["story_index"]: row["text"] for row in built if row["label"] == 1}
    corrupted = {row["story_index"]: row["text"] for row in built if row["label"] == 0}
    order = sorted(human.keys() & corrupted.keys())
    return PairSet(name, [human[i] for i in order], [corrupted[i] for i in order])


def pair_sets() -> list[PairSet]:
    datasets.disable_progress_bars()
    roc = roc_stories()[1]
    held_wp = wp_rows()[1]
    wp = [writing_prompts_text(row["prompt"], row["story"]) for row in held_wp]
    whole = ["\n".join(writing_prompts_segments(row["prompt"], row["story"])) for row in held_wp]
    return [
        pair_set("ROC held-back pairs", roc),
        pair_set("WP held-back pairs", [t for t in wp if t]),
        pair_set("WP whole-story pairs", [t for t in whole if t]),
    ]


def texts_digest(texts: Sequence[str]) -> str:
    """The sha256 of a list of texts, so that kept scores are only read back for the texts they score."""
    return hashlib.sha256("\x1e".join(texts).encode("utf-8")).hexdigest()


SetScorer = Callable[[str, list[str]], np.ndarray]


class KeptScoresError(ValueError):
    """A file of kept scores that is no such file, or was kept for other texts than the suite's."""


def read_kept_scores(path: pathlib.Path) -> dict[str, dict]:
    """The scores ``--scores-dir`` kept in ``path``: per set, its texts' sha256 and a score per text."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise KeptScoresError(f"{path}: not a file of kept scores ({error})") from None
    if not isinstance(kept, dict) or not all(
        isinstance(entry, dict)
        and isinstance(entry.get("texts_sha256"), str)
        and isinstance(entry.get("scores"), list)
        and all(is_finite_number(score) for score in entry["scores"])
        for entry in kept.values()
    ):
        raise KeptScoresError(
            f"{path}: not a file of kept scores (--scores-dir writes one per row: for each set, "
            "its texts' sha256 and a score per text)"
        )
    return kept


def is_finite_number(value: object) -> bool:
    """Whether a JSON value is a finite number (not a bool, a string or null)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False
