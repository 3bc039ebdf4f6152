"""UNION's training pairs for ``train_union.py``: read them, or negative-sample them from stories, and hold out whole stories."""

from __future__ import annotations

import logging
import os
import random
from typing import Any

import datasets

from story_quality.training.run_setup import DATA_FILE_BUILDERS
from story_quality.union.normalization import StoryNormalization

logger = logging.getLogger(__name__)

PAIR_COLUMNS = ("text", "label", "original", "context", "story_index")
SAVED_DATASET_FILES = ("state.json", "dataset_dict.json")


def _load_table(source: str, split: str) -> datasets.Dataset | None:
    """A saved dataset or a data file; None when ``source`` is neither (then a corpus name)."""
    if os.path.isdir(source):
        if not any(os.path.isfile(os.path.join(source, f)) for f in SAVED_DATASET_FILES):
            raise ValueError(
                f"--dataset {source} is a folder but not a saved dataset (no {' or '.join(SAVED_DATASET_FILES)}); "
                f"build one with: python training/build_union_data.py STORIES.txt --output-dir {source}"
            )
        loaded = datasets.load_from_disk(source)
        if isinstance(loaded, datasets.DatasetDict):
            if split not in loaded:
                raise ValueError(f"{source!r} has splits {sorted(loaded)}, not {split!r} (--dataset_split).")
            loaded = loaded[split]
        return loaded
    builder = DATA_FILE_BUILDERS.get(os.path.splitext(source)[1].lower())
    if builder and os.path.isfile(source):
        return datasets.load_dataset(builder, data_files=source, split="train")
    return None


def load_pairs(
    source: str, data: Any, normalization: StoryNormalization, seed: int, pairs_only: str | None = None
) -> datasets.Dataset:
    """UNION's human/corrupted pairs from ``source``: read as they are, or sampled from stories.

    ``data`` carries ``train_union``'s data arguments: ``dataset_split``, ``text_column`` and
    ``preprocessing_num_workers``. With ``pairs_only`` (why), stories are refused before any
    sampling: the source must hold built pairs.
    """
    table = _load_table(source, data.dataset_split)
    if table is not None and set(PAIR_COLUMNS) <= set(table.column_names):
        if len(table) == 0:
            raise ValueError(
                f"--dataset {source} holds no pairs; rebuild it with training/build_union_data.py."
            )
        labels = set(table.unique("label"))
        if not labels <= {0, 1}:
            raise ValueError(f"{source!r}: label must be 0 (perturbed) or 1 (human), found {sorted(labels)}.")
        check_normalization(table, source, normalization)
        return table
    if pairs_only:
        columns = f" (it has {table.column_names})" if table is not None else ""
        raise ValueError(f"{source} holds no UNION pairs{columns}: {pairs_only}")
    from story_quality.training.corpora import load_stories
    from story_quality.training.negatives.build import build_union_dataset

    if table is not None and os.path.isdir(source):
        column = data.text_column or "text"
        if column not in table.column_names:
            raise ValueError(
                f"{source!r} has columns {table.column_names}: neither UNION pairs (columns "
                f"{list(PAIR_COLUMNS)}) nor stories (a {column!r} column; see --text_column)."
            )
        stories = table.select_columns([column]).rename_columns({column: "text"} if column != "text" else {})
    else:
        stories = load_stories(source, split=data.dataset_split, text_column=data.text_column)
    logger.info("Negative-sampling %d stories from %s", len(stories), source)
    return build_union_dataset(
        stories, normalization=normalization, seed=seed, num_proc=data.preprocessing_num_workers
    )


def check_normalization(pairs: datasets.Dataset, source: str, normalization: StoryNormalization) -> None:
    """Refuse pairs built with another normalisation than the one the checkpoint will record."""
    from story_quality.training.negatives.build import normalization_of

    try:
        built_with = normalization_of(pairs)
    except ValueError:  # pairs from elsewhere record nothing: trust --normalization
        return
    if built_with != normalization:
        raise ValueError(
            f"{source!r} was built with normalisation {built_with.to_dict()}, but --normalization gives "
            f"{normalization.to_dict()}; the checkpoint would record the wrong one. Pass the matching preset."
        )


def split_held_out(
    pairs: datasets.Dataset, fraction: float, seed: int
) -> tuple[datasets.Dataset, datasets.Dataset | None]:
    """Hold out whole stories: a human story and its corrupted copy land on the same side."""
    if not 0 <= fraction < 1:
        raise ValueError(f"--validation_fraction must be in [0, 1), got {fraction}.")
    if fraction == 0:
        return pairs, None
    story_of = pairs["story_index"]
    stories = sorted(set(story_of))
    random.Random(seed).shuffle(stories)
    held = set(stories[: max(1, round(fraction * len(stories)))])
    if len(held) == len(stories):
        raise ValueError(f"Only {len(stories)} stories: too few to hold out a fraction of {fraction}.")
    train = [i for i, s in enumerate(story_of) if s not in held]
    validation = [i for i, s in enumerate(story_of) if s in held]
    return pairs.select(train), pairs.select(validation)
