"""UNION scoring as one object: a checkpoint loaded once, ``score(texts)`` for every call.

    >>> scorer = UnionScorer("default")                         # doctest: +SKIP
    >>> result = scorer.score(["Ken went to the store. He bought milk."], batch_size=32)  # doctest: +SKIP
    >>> result.scores, result.mean, result.signature            # doctest: +SKIP

The metric script (``metrics/union/union.py``), ``story-quality score`` and the development
suite all score through it: the checks of the texts and options (:data:`UNION_OPTIONS`), the
device, the window, how long stories are read, the human scale, the warnings, the batching and
the signature live here, once.
"""

from __future__ import annotations

import array
import dataclasses
import math
import pathlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from story_quality.batching import progress
from story_quality.bert_forward.classifier import BertClassifierFastPath, supports_fast_path
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.collection_pause import collector_paused
from story_quality.model_window import model_window
from story_quality.options import check_window
from story_quality.precision import SIGNATURE_LABELS, check_precision
from story_quality.signature import Signature, normalization_label
from story_quality.text_checks import check_texts, warn_unread_texts
from story_quality.union.checkpoints import SHIPPED_DEFAULT, is_config_name, resolve_checkpoint
from story_quality.union.encoding import Encoded, Rows, append_encoded, encode
from story_quality.union.human_scale import HUMAN_SCALES, HumanScale, human_scale_for_call
from story_quality.union.inference import class_probabilities
from story_quality.union.loading import load_checkpoint, refuse_unscorable
from story_quality.union.normalization import StoryNormalization
from story_quality.union.options import UNION_OPTIONS, default_workers
from story_quality.union.preparation import PreparationWorkers
from story_quality.union.windows import encode_windows, recorded_long_stories, story_means
from story_quality.warning_origin import user_stacklevel


@dataclasses.dataclass(frozen=True)
class UnionResult:
    """One call's scores: P(human-written) per text, in input order, and what made them."""

    scores: list[float]
    signature: str
    percentiles: list[float] | None = None  # with percentiles= only: each text's place among human stories

    @property
    def mean(self) -> float:
        """The mean score (NaN when there are no texts)."""
        return sum(self.scores) / len(self.scores) if self.scores else math.nan

    def as_dict(self) -> dict:
        """The metric's result: ``scores``, ``union_score``, ``signature`` (and ``percentiles``)."""
        result = {"scores": self.scores, "union_score": self.mean, "signature": self.signature}
        return result if self.percentiles is None else {**result, "percentiles": self.percentiles}


@dataclasses.dataclass(frozen=True)
class CallOptions:
    """One call's options: every option of :data:`UNION_OPTIONS`, checked, with those the checkpoint
    decides (the window, how long stories are read, the precision the device allows) resolved
    against it. ``options.NAME`` is option ``NAME``'s value."""

    options: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["options"][name]
        except KeyError:
            raise AttributeError(f"a union call has no option {name!r}") from None


class UnionScorer:
    """A UNION checkpoint, loaded once: ``default`` (the shipped default), a Hub id
    (``org/model@revision`` pins one) or a folder."""

    def __init__(self, checkpoint: str = SHIPPED_DEFAULT) -> None:
        self.checkpoint = resolve_checkpoint(checkpoint)
        self.tokenizer, self.model, self.label_index = load_checkpoint(self.checkpoint)
        self.logits_fn = (
            BertClassifierFastPath(self.model) if supports_fast_path(self.model) else self._model_logits
        )
        self.normalization = StoryNormalization.from_config(self.model.config)
        self.long_stories = recorded_long_stories(self.model.config)
        self._workers: PreparationWorkers | None = None

    def _model_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits

    def call_options(self, options: Mapping[str, Any]) -> CallOptions:
        """``options`` (``score``'s keyword arguments) checked by :data:`UNION_OPTIONS` and resolved
        against this checkpoint: its window, and how it reads long stories when not told."""
        checked = UNION_OPTIONS.check(options, caller="score()")
        limit = model_window(self.tokenizer, self.model.config)
        window = check_window(checked["max_length"], limit, UNION_OPTIONS["max_length"].minimum)
        resolved = {
            "window": model_window(self.tokenizer, self.model.config, window),
            "long_stories": checked["long_stories"] or self.long_stories,
            "precision": check_precision(checked["precision"], checked["device"]),
            "num_workers": (
                default_workers(checked["device"].type)
                if checked["num_workers"] is None
                else checked["num_workers"]
            ),
        }
        return CallOptions({**checked, **resolved})

    def signature(self, call: CallOptions) -> Signature:
        """What made the scores: checkpoint, normalisation, window, long stories, precision, version."""
        return Signature.of(
            "union",
            f"checkpoint:{self.checkpoint.label()}",
            f"norm:{normalization_label(self.normalization.to_dict())}",
            f"window:{call.window}",
            f"long:{call.long_stories}",
            SIGNATURE_LABELS[call.precision],
        )

    @UNION_OPTIONS.keywords
    def score(self, texts: Sequence[str], **options: Any) -> UnionResult:
        """P(human-written) of each text; every text and option (:data:`UNION_OPTIONS`, keyword
        arguments) is checked before any work."""
        texts = check_texts(texts)
        call = self.call_options(options)
        made_by = self.signature(call)
        human = None
        if call.percentiles is not None:  # the table is checked before any story is read
            human = human_scale_for_call(call.percentiles, made_by, self.checkpoint)
        if next(self.model.parameters()).device != call.device:
            self.model.to(call.device)
        with collector_paused():
            scores = self._scores(texts, call)
        return _with_percentiles(scores, made_by, call.percentiles, human)

    def _encode(self, texts: list[str], call: CallOptions) -> Encoded:
        with progress(total=len(texts), desc="UNION text", unit="story") as bar:
            if call.long_stories == "windows":
                return encode_windows(
                    self.tokenizer, texts, call.window, self.normalization, progress=bar.update
                )
            return encode(self.tokenizer, texts, call.window, prepare=self.normalization, progress=bar.update)

    def workers(self, count: int) -> PreparationWorkers:
        """This scorer's text preparation workers, ``count`` of them, kept between calls."""
        if self._workers is None or self._workers.count != count:
            if self._workers is not None:
                self._workers.close()
            self._workers = PreparationWorkers(self.tokenizer, self.normalization, count)
        return self._workers

    def _window_scores(self, encoded: Encoded, call: CallOptions, batch_bar: bool = True) -> list[float]:
        """P(human) of each encoded row, in batches of ``call.batch_size`` sorted by length."""
        return class_probabilities(
            self.logits_fn,
            encoded,
            label_index=self.label_index,
            pad_id=self.tokenizer.pad_token_id,
            batch_size=call.batch_size,
            device=call.device,
            precision=call.precision,
            progress=(lambda batches: progress(batches, desc="UNION", unit="batch")) if batch_bar else None,
        )

    def _overlapped(self, texts: list[str], call: CallOptions) -> tuple[Encoded, list[float]]:
        """Every text encoded by the workers and its rows scored, chunk by chunk, the model scoring one
        chunk while the workers prepare the next; the encodings joined in input order."""
        windows = call.long_stories == "windows"
        joined = Encoded(Rows(), [], call.window, array.array("i") if windows else None)
        scores: list[float] = []
        chunks = self.workers(call.num_workers).chunks(texts, call.window, call.long_stories)
        with progress(total=len(texts), desc="UNION", unit="story") as bar:
            for start, count, encoded in chunks:
                scores += self._window_scores(encoded, call, batch_bar=False)
                append_encoded(joined, encoded, start)
                bar.update(count)
        return joined, scores

    def _scores(self, texts: list[str], call: CallOptions) -> list[float]:
        if call.num_workers and texts:
            encoded, window_scores = self._overlapped(texts, call)
            self._warn(texts, encoded, call)
        else:
            encoded = self._encode(texts, call)
            self._warn(texts, encoded, call)
            window_scores = self._window_scores(encoded, call)
        return story_means(window_scores, encoded, len(texts))

    def _warn(self, texts: list[str], encoded: Encoded, call: CallOptions) -> None:
        """Refuse a text the model cannot read; warn of texts it reads little of, and of truncation."""
        warn_unread_texts(texts, refuse_unscorable(encoded, self.tokenizer))
        if encoded.truncated:
            warnings.warn(
                f"{len(encoded.truncated)} of {len(texts)} stories are longer than the model's window of "
                f"{call.window} word pieces and were truncated, keeping the head "
                f"(first: predictions[{encoded.truncated[0]}]).",
                stacklevel=user_stacklevel(),
            )


def _with_percentiles(
    scores: list[float], made_by: Signature, scale: str | None, human: HumanScale | None
) -> UnionResult:
    """The call's result: with a human scale, each score's percentile among its human stories and the
    table in the signature."""
    if scale is None or human is None:
        return UnionResult(scores, str(made_by))
    return UnionResult(
        scores,
        str(made_by.with_part(human.signature_part(scale))),
        percentiles=human.percentiles(scores, HUMAN_SCALES[scale]),
    )


def scorer_for(checkpoint: str) -> UnionScorer:
    """The scorer of the shipped default (``"default"``), a Hub id (``@revision`` pins one) or a
    checkpoint folder, a folder read by its absolute path (so that ``"."`` is named by its folder)."""
    local = not is_config_name(checkpoint) and CheckpointReference.parse(checkpoint).local
    return UnionScorer(str(pathlib.Path(checkpoint).expanduser().resolve()) if local else checkpoint)
