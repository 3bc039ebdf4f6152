"""The fluency reader: a small sentence classifier of human prose against weak-generator text.

A reader is a plain ``BertForSequenceClassification`` (label 0 generated, 1 human) whose config
says it is one (``story_quality_reader: fluency``, written by ``training/train_fluency.py``) and how
many word pieces of a sentence it reads. A story's sentences (:mod:`story_quality.fluency.text`)
are read one by one, sorted by length and padded per batch; each gets the logit
``human - generated``. The story's fluency is the mean of its sentences' logits; beside it, the
share of sentences the reader calls generated (logit below 0).
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from story_quality.fluency.text import read_sentences

ID2LABEL = {0: "generated", 1: "human"}
READER_KEY = "story_quality_reader"
READER_KIND = "fluency"
LENGTH_KEY = "fluency_max_length"


class NotAFluencyReader(ValueError):
    """A folder that is not a fluency reader was given where one is needed."""


def mark_as_reader(config: Any, max_length: int) -> None:
    """Record in a model config that it is a fluency reader reading ``max_length`` pieces a sentence."""
    setattr(config, READER_KEY, READER_KIND)
    setattr(config, LENGTH_KEY, int(max_length))


def reader_problem(folder: str | os.PathLike) -> str | None:
    """Why ``folder`` is not a fluency reader's folder, or None when it is one."""
    config = pathlib.Path(folder) / "config.json"
    if not config.is_file():
        return f"{folder} has no config.json: not a model folder"
    try:
        record = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"{config} cannot be read as JSON ({error})"
    if record.get(READER_KEY) != READER_KIND:
        return f"{config} does not mark a fluency reader ({READER_KEY}: {READER_KIND!r} is missing)"
    labels = {int(k): str(v).lower() for k, v in (record.get("id2label") or {}).items()}
    if labels != ID2LABEL:
        return f"{config} has labels {labels}, a fluency reader has {ID2LABEL}"
    length = record.get(LENGTH_KEY)
    if not isinstance(length, int) or length < 4:
        return f"{config} records no usable {LENGTH_KEY} ({length!r})"
    return None


def is_fluency_reader(folder: str | os.PathLike) -> bool:
    return pathlib.Path(folder).is_dir() and reader_problem(folder) is None


@dataclass(frozen=True)
class StoryFluency:
    """One story as the reader saw it: its sentences' logits, their mean and the share flagged."""

    logits: tuple[float, ...]

    @property
    def mean_logit(self) -> float:
        return float(np.mean(self.logits))

    @property
    def flagged_share(self) -> float:
        return float(np.mean(np.asarray(self.logits) < 0))


class FluencyReader:
    """A fluency reader loaded once from its folder; :meth:`read` scores stories."""

    def __init__(self, folder: str | os.PathLike, device: str = "cpu") -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        problem = reader_problem(folder) if pathlib.Path(folder).is_dir() else f"{folder} is not a folder"
        if problem is not None:
            raise NotAFluencyReader(f"not a fluency reader: {problem}")
        self.folder = pathlib.Path(folder)
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32)
        self.model = model.to(device).eval()
        self.max_length = int(getattr(model.config, LENGTH_KEY))

    def sentence_logits(self, sentences: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """``human - generated`` logit of each normalised sentence, in input order."""
        import torch

        pieces = self.tokenizer(list(sentences), truncation=True, max_length=self.max_length)["input_ids"]
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        logits = np.empty(len(pieces), dtype=np.float64)
        pad = self.tokenizer.pad_token_id
        device = next(self.model.parameters()).device  # wherever the model was moved since loading
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                width = max(len(pieces[i]) for i in batch)
                ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    ids[row, : len(pieces[i])] = torch.tensor(pieces[i])
                    mask[row, : len(pieces[i])] = 1
                out = self.model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
                logits[batch] = (out[:, 1] - out[:, 0]).double().cpu().numpy()
        return logits

    def group_logits(self, groups: Sequence[Sequence[str]], batch_size: int = 64) -> list[np.ndarray]:
        """The logits of each group of sentences (a story's, or a pair's candidates), all read in one
        stream of length-sorted batches."""
        logits = self.sentence_logits([sentence for group in groups for sentence in group], batch_size)
        bounds = np.cumsum([0] + [len(group) for group in groups])
        return [logits[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def read(self, texts: Sequence[str], batch_size: int = 64) -> list[StoryFluency]:
        """Each story's fluency; a story with no sentence after normalisation is read whole."""
        stories = [read_sentences(text) for text in texts]
        return [StoryFluency(tuple(logits.tolist())) for logits in self.group_logits(stories, batch_size)]
