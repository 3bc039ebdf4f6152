"""Copy replacement: a share of a built corpus's corrupted copies replaced by generated texts.

The engine under two commands: the story LM's samples (``generated_negatives.py replace``) and the
fluent negatives (``fluent_negatives.py``, through :func:`replace_negatives`).
``replace`` is the last step of ``training/generated_negatives.py``: the samples ``generate``
wrote (:mod:`.lm_continuations`) are matched to the corpus's stories (by ``story_index``, the
story's sha256 and its opening) and take the place of corrupted copies, which then list the
corruption ``generated``; human rows and labels are untouched.
"""

from __future__ import annotations

import collections
import hashlib
import json
import pathlib
import random
from typing import Any

from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.negatives.lm_continuations import load_corpus, read_json_lines
from story_quality.training.negatives.story_lm import opening, text_sha256
from story_quality.training.output_folders import (
    check_output_folder,
    probe_writable,
    saved_dataset,
    written_whole,
)

GENERATED = "generated"  # the corruption name replaced rows carry
SUMMARY = "generated_negatives_summary.json"
SAMPLE_KEYS = ("story_index", "copy", "domain", "text")
# replace's output (a saved dataset and its summary, never another corpus's).
REPLACED = saved_dataset("replace", "a corpus with generated negatives", SUMMARY)


def copy_rate(sample_text: str, original: str, n: int = 4) -> float:
    """Share of the sample's n-grams that occur in the original story (the given opening included).

    >>> copy_rate("a b c d e", "a b c d x")
    0.5
    """
    mine = sample_text.split()
    grams = [tuple(mine[i : i + n]) for i in range(len(mine) - n + 1)]
    words = original.split()
    theirs = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    return sum(g in theirs for g in grams) / len(grams) if grams else 0.0


def written(row: dict) -> bool:
    """Whether a corrupted row already holds written text (any kind of generated negative)."""
    return any(name.startswith(GENERATED) for name in row.get("corruptions") or ())


def replace_negatives(
    corpus: Any, samples: dict[int, list[str]], fraction: float, seed: int, label: str = GENERATED
) -> tuple[Any, dict[str, Any]]:
    """``corpus`` (UNION pairs) with each corrupted copy replaced, with probability ``fraction``, by
    a sample of its story (the story's first replaced copy takes its first sample, and so on);
    replaced rows list the one corruption ``label``. Human rows and labels are untouched, and so are
    rows an earlier step already replaced by written text (a corruption named ``generated...``),
    so kinds of generated negatives can be applied one after another."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"--fraction must be in [0, 1], got {fraction}.")
    rng = random.Random(seed)
    used: collections.Counter[int] = collections.Counter()
    rates: list[float] = []

    def swap(row: dict) -> dict:
        index = row["story_index"]
        if row["label"] == 0 and samples.get(index) and not written(row) and rng.random() < fraction:
            texts = samples[index]
            row["text"] = texts[used[index] % len(texts)]
            row["corruptions"] = [label]
            used[index] += 1
            rates.append(copy_rate(row["text"], row["original"]))
        return row

    swapped = corpus.map(swap, desc="Replacing corrupted copies", load_from_cache_file=False)
    negatives = sum(1 for label in corpus["label"] if label == 0)
    summary = {
        "replaced": sum(used.values()),
        "negatives": negatives,
        "fraction": fraction,
        "seed": seed,
        "mean_4gram_copy_rate": round(sum(rates) / len(rates), 4) if rates else 0.0,
    }
    return swapped, summary


def corpus_stories(corpus: Any) -> dict[int, str]:
    """``story_index`` -> the story's text (its human row), as export read it."""
    stories: dict[int, str] = {}
    for index, text, label in zip(corpus["story_index"], corpus["text"], corpus["label"], strict=True):
        if label == 1:
            stories.setdefault(index, text)
    return stories


def read_samples(path: pathlib.Path, domains: str, stories: dict[int, str]) -> dict[int, list[str]]:
    """The samples of ``path`` per story, checked against the corpus's ``stories``.

    A sample belongs to a story when its ``story_index`` is the corpus's, its ``story_sha256`` (if
    recorded) is the story's text's, and it opens with the story's opening: samples made for
    another corpus, whose indexes mean other stories, are refused naming the line.
    """
    samples: dict[int, list[tuple[int, str]]] = collections.defaultdict(list)
    for number, record in read_json_lines(path, SAMPLE_KEYS, "the samples generate wrote"):
        index, where = record["story_index"], f"{path}, line {number}"
        story = stories.get(index)
        if story is None:
            raise ValueError(
                f"{where}: story_index {index} is not in the corpus; these samples were made for another one."
            )
        if record.get("story_sha256", text_sha256(story)) != text_sha256(story) or record["text"].split()[
            : len(opening(story.split(), record["domain"]))
        ] != opening(story.split(), record["domain"]):
            raise ValueError(
                f"{where}: the sample of story {index} continues another story than the corpus's story {index}; "
                "these samples were made for another corpus (rerun export and generate on this one)."
            )
        if domains == "both" or record["domain"] == domains:
            samples[index].append((record["copy"], record["text"]))
    return {index: [text for _, text in sorted(pairs)] for index, pairs in samples.items()}


def replace_corpus(
    corpus_dir: pathlib.Path,
    samples_path: pathlib.Path,
    output_dir: pathlib.Path,
    *,
    fraction: float,
    domains: str,
    seed: int,
    overwrite: bool = False,
) -> dict[str, Any]:
    """``replace``: the output folder checked, the samples matched to the corpus, all before any work;
    then the corpus with generated negatives and its summary written into ``output_dir`` whole."""
    check_output_folder(output_dir, REPLACED, overwrite, inputs=[corpus_dir, samples_path])
    probe_writable(output_dir)
    corpus = load_corpus(corpus_dir, "corpus")
    samples = read_samples(samples_path, domains, corpus_stories(corpus))
    swapped, summary = replace_negatives(corpus, samples, fraction, seed)
    summary["samples_sha256"] = hashlib.sha256(samples_path.read_bytes()).hexdigest()
    summary["domains"] = domains
    summary["rows_sha256"] = corpus_sha256(swapped)
    with written_whole(output_dir) as scratch:
        swapped.save_to_disk(str(scratch))
        (scratch / SUMMARY).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
