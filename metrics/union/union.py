"""UNION: an unreferenced metric of story coherence (Guan & Huang, EMNLP 2020).

A thin ``evaluate.Metric`` over the installed ``story_quality`` package, as evaluate's
``bertscore.py`` is over ``bert_score``: the checkpoint is the config name, loaded once per
instance; normalisation, loading and batched scoring live in ``story_quality.union``.
"""

from __future__ import annotations

import hashlib
import math
import os
import warnings

import evaluate
import torch

from story_quality import validation
from story_quality.batching import progress
from story_quality.sharing import SharedInstance
from story_quality.signature import checkpoint_id, normalization_label, signature
from story_quality.union import CITATION
from story_quality.union.bert_classifier_fast_path import BertClassifierFastPath, supports_fast_path
from story_quality.union.checkpoints import is_config_name, resolve_checkpoint
from story_quality.union.human_scale import RESCALES, add_percentiles, reference_for_call
from story_quality.union.loading import human_label_index, load_checkpoint, refuse_unscorable, split_revision
from story_quality.union.scoring import MIN_WINDOW, class_probabilities, encode, model_window
from story_quality.union.story_text import StoryNormalization
from story_quality.union.windows import LONG_STORIES, encode_windows, recorded_long_stories, story_means

_DESCRIPTION = """\
UNION scores how coherent a story is, without a reference story. It is a BERT classifier
trained to tell human-written stories from automatically corrupted copies of them
(repeated plot, substituted and reordered sentences, negated events). The score of a story
is the classifier's probability that it is human-written: 1 reads as coherent, 0 as broken.

The checkpoint is the config name: "default" (the shipped default, inside the package),
"roc" / "wp" (the BERT-base Hub checkpoints for ROCStories / WritingPrompts), any Hub model
id (add "@revision" to pin one), or a local directory.
"""

_KWARGS_DESCRIPTION = """
Scores each story with a UNION checkpoint.

Args:
    predictions (`list` of `str`): the stories to score, each one string, leading context
        (the first sentence, or the prompt) included, as UNION was trained.
    batch_size (`int`): stories per forward pass (default 32). Scores do not depend on it.
    device (`str`, `int` or `torch.device`, optional): where to run; the first GPU when
        there is one, else the CPU.
    max_length (`int`, optional): the window, in word pieces; default the checkpoint's
        (200 for the published checkpoints, 256 for "default").
    long_stories (`str`, optional): how a story longer than the window is read: "head" keeps
        its first word pieces (the paper), "windows" scores consecutive windows of whole
        sentences and averages them, weighted by their lengths. Default: what the checkpoint
        records, else "head" ("default" records "windows"). Stories that fit the window
        score the same either way.
    rescale (`str`, optional): "human-roc" or "human-wp" also returns each story's percentile
        among the held-back human stories of that domain, scored by the same checkpoint (a table
        shipped with "default"; another checkpoint has none and is refused). Default None.

Returns:
    scores (`list` of `float`): P(human-written) for each story, in input order, in [0, 1];
        higher is more coherent.
    union_score (`float`): the mean of `scores` (NaN when there are no stories).
    percentiles (`list` of `float`, with `rescale` only): each story's percentile, 0-100, among
        the human stories of the domain: the share of them scoring lower, ties counted half. A
        place among one set of human stories, not a probability.
    signature (`str`): what made the scores (checkpoint and its revision or weights' sha256,
        normalisation, window, precision, package version); report it with the numbers.

Examples:
    >>> union = evaluate.load("union")  # the shipped default; elsewhere: story_quality.metric_path("union")
    >>> results = union.compute(predictions=[
    ...     "Ken went to the store. He bought milk. He went home.",
    ...     "Ken went to the store. Ken went to the store. He did not go home.",
    ... ])
    >>> sorted(results)
    ['scores', 'signature', 'union_score']
    >>> [0.0 <= s <= 1.0 for s in results["scores"]]
    [True, True]
    >>> results["scores"][0] > results["scores"][1]  # the repeated plot reads as less coherent
    True
    >>> abs(results["union_score"] - sum(results["scores"]) / 2) < 1e-9
    True
    >>> union.compute(predictions=[])["scores"]
    []
"""

OPTIONS = ("batch_size", "device", "max_length", "long_stories", "rescale")
PAPER_URL = "https://aclanthology.org/2020.emnlp-main.736"
CODE_URL = "https://github.com/thu-coai/UNION"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Union(SharedInstance, validation.CheckedInputs, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return validation.text_metric_info(
            _DESCRIPTION, _KWARGS_DESCRIPTION, CITATION, PAPER_URL, codebase_url=CODE_URL
        )

    def _build_data_dir(self) -> str:
        # evaluate joins config_name into its cache path: a local checkpoint path would make the
        # checkpoint directory itself the cache (lock and arrow files written into it).
        safe = self.config_name if is_config_name(self.config_name) else _cache_key(self.config_name)
        data_dir = os.path.join(self._data_dir_root, self.name, safe)
        os.makedirs(data_dir, exist_ok=True)
        return data_dir

    def _download_and_prepare(self, dl_manager) -> None:
        """Load the checkpoint once per metric instance; compute calls reuse it."""
        source, revision = split_revision(resolve_checkpoint(self.config_name))
        local = os.path.isdir(source)
        self.tokenizer, self.model = load_checkpoint(source, None if local else revision, self.config_name)
        self.logits_fn = (
            BertClassifierFastPath(self.model) if supports_fast_path(self.model) else self._model_logits
        )
        self.label_index = human_label_index(self.model.config, source)
        self.normalization = StoryNormalization.from_config(self.model.config)
        self.long_stories = recorded_long_stories(self.model.config)
        self.checkpoint = source if local else f"{source}@{revision or 'main'}"
        self.checkpoint_label = checkpoint_id(self.config_name, source, revision, local)

    def signature(
        self, window: int | None = None, device: torch.device | None = None, long_stories: str | None = None
    ) -> str:
        """What made this instance's scores: checkpoint, normalisation, window and reading, precision, version."""
        window = window or model_window(self.tokenizer, self.model.config)
        precision = "bf16-autocast" if device is not None and device.type == "cuda" else "fp32"
        return signature(
            "union",
            f"checkpoint:{self.checkpoint_label}",
            f"norm:{normalization_label(self.normalization.to_dict())}",
            f"window:{window}",
            f"long:{long_stories or self.long_stories}",
            precision,
        )

    def _model_logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Validate before evaluate's own encoding, which would turn 5 into "5" silently."""
        validation.check_options(kwargs, OPTIONS)
        with self.taking_turns():  # another thread's add must not land between the check and the work
            if predictions is None:  # score what add_batch gathered
                if self.writer is None and self.num_process == 1:
                    validation.check_texts(None)
                return super().compute(references=references, **kwargs)
            texts = validation.check_texts(predictions)
            if self.num_process == 1 and self.writer is None:
                # Nothing added with add_batch, one process: score the list as given. evaluate's own
                # path writes every story to an Arrow file and reads them all back into a second list,
                # which doubles the memory of a large call.
                return self._compute(texts, **kwargs)
            return super().compute(predictions=texts, references=references, **kwargs)

    def _compute(
        self,
        predictions: list[str],
        batch_size: int = 32,
        device: str | int | torch.device | None = None,
        max_length: int | None = None,
        long_stories: str | None = None,
        rescale: str | None = None,
    ) -> dict:
        predictions = validation.check_texts(predictions)
        batch_size = validation.check_count(batch_size, "batch_size")
        max_length = validation.check_window(
            max_length, model_window(self.tokenizer, self.model.config), MIN_WINDOW
        )
        long_stories = (
            self.long_stories
            if long_stories is None
            else validation.check_choice(long_stories, "long_stories", LONG_STORIES)
        )
        target = validation.check_device(device)
        if next(self.model.parameters()).device != target:
            self.model.to(target)
        window = model_window(self.tokenizer, self.model.config, max_length)
        signature = self.signature(window, target, long_stories)
        if rescale is not None:  # the table is checked before any story is read
            rescale = validation.check_choice(rescale, "rescale", tuple(RESCALES))
            human = reference_for_call(rescale, signature, self.checkpoint)
        with progress(total=len(predictions), desc="UNION text", unit="story") as bar:
            if long_stories == "windows":
                encoded = encode_windows(
                    self.tokenizer, predictions, window, self.normalization, progress=bar.update
                )
            else:
                encoded = encode(
                    self.tokenizer, predictions, window, prepare=self.normalization, progress=bar.update
                )
        validation.warn_unread_texts(predictions, refuse_unscorable(encoded, self.tokenizer), stacklevel=3)
        if encoded.truncated:
            warnings.warn(
                f"{len(encoded.truncated)} of {len(predictions)} stories are longer than the model's window of "
                f"{window} word pieces and were truncated, keeping the head "
                f"(first: predictions[{encoded.truncated[0]}]).",
                stacklevel=3,
            )
        window_scores = class_probabilities(
            self.logits_fn,
            encoded,
            label_index=self.label_index,
            pad_id=self.tokenizer.pad_token_id,
            batch_size=batch_size,
            device=target,
            progress=lambda batches: progress(batches, desc="UNION", unit="batch"),
        )
        scores = story_means(window_scores, encoded, len(predictions))
        result = {
            "scores": scores,
            "union_score": sum(scores) / len(scores) if scores else math.nan,
            "signature": signature,
        }
        return result if rescale is None else add_percentiles(result, rescale, human)


def _cache_key(name: str) -> str:
    return "checkpoint-" + hashlib.sha256(name.encode()).hexdigest()[:16]
