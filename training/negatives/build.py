"""UNION's training set from human stories: each story (label 1) and one corrupted copy (label 0).

Three ``datasets.map`` passes, so the work scales with ``num_proc`` and is cached like any
other ``datasets`` transform:

1. normalise (``story_quality/union/normalization.py``, the same code the ``union`` metric applies
   when scoring) and POS-tag every story; mark the ones to skip and why;
2. count keywords by POS over the kept stories (deterministic, in the main process): the
   frequency table of word-level substitution;
3. corrupt each kept story with its own random stream (seeded by ``seed`` and the story's
   row), emitting the human row and the corrupted row.

The result records the normalisation and a summary (rows, skipped stories by reason,
corruption counts, which NLTK resources were used) as JSON in ``info.description``; read
it back with :func:`read_summary`.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import datasets
from datasets.fingerprint import Hasher

from story_quality.training.negatives import (
    corruptions,
    grammar,
    morphology,
    negation,
    pos_heuristic,
)
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.training.negatives.corruptions import (
    TECHNIQUE_PROBS,
    CorruptionContext,
    KeywordTable,
    Sentence,
    StoryRandom,
    check_technique_probs,
    corrupt,
)
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.union.normalization import (
    CONFIG_KEY,
    ROC_STORIES,
    StoryNormalization,
    remove_invisible,
)

logger = logging.getLogger(__name__)

LABELS = ["perturbed", "human"]
SKIP_REASONS = ("empty", "not_text", "too_long", "too_few_sentences", "uncorruptible")
# A story longer than this is skipped and counted as "too_long": 50 times a 200-word
# WritingPrompts story, so only a malformed row (a whole book on one line) reaches it, and it
# never stalls sentence splitting and tagging.
MAX_STORY_CHARACTERS = 100_000
OUTPUT_FEATURES = datasets.Features(
    {
        "text": datasets.Value("string"),
        "label": datasets.ClassLabel(names=LABELS),
        "original": datasets.Value("string"),
        "context": datasets.Value("string"),
        "corruptions": datasets.List(datasets.Value("string")),
        "story_index": datasets.Value("int64"),
    }
)
_PREPARED_FEATURES = datasets.Features(
    {
        "story_index": datasets.Value("int64"),
        "sentences": datasets.List(datasets.Value("string")),
        "tags": datasets.List(datasets.List(datasets.Value("string"))),
        "skip": datasets.Value("string"),
    }
)


def clean_text(value: Any) -> tuple[str | None, str]:
    """(text, skip reason): invisible control/format characters become spaces; non-strings are refused.

    Only what no reader sees is changed (zero-width spaces, BOMs, control codes, lone
    surrogates); everything visible is left to the shared normalisation.
    """
    if value is None:
        return None, "empty"
    if not isinstance(value, str):
        return None, "not_text"
    if len(value) > MAX_STORY_CHARACTERS:
        return None, "too_long"
    value = remove_invisible(value)
    return (value, "") if value.strip() else (None, "empty")


def prepare_batch(
    batch: dict[str, list],
    indices: list[int],
    *,
    text_column: str,
    normalization: StoryNormalization,
    lexicon: Lexicon,
    min_sentences: int,
) -> dict[str, list]:
    out: dict[str, list] = {"story_index": [], "sentences": [], "tags": [], "skip": []}
    for index, value in zip(indices, batch[text_column], strict=True):
        text, reason = clean_text(value)
        sentences: list[str] = []
        tags: list[list[str]] = []
        if text is not None:
            sentences = [" ".join(s.split()) for s in normalization.sentences(text)]
            sentences = [s for s in sentences if s]
            if len(sentences) < min_sentences:
                reason = "too_few_sentences"
            else:
                tags = [lexicon.tag(s.split(" ")) for s in sentences]
        out["story_index"].append(index)
        out["sentences"].append(sentences if not reason else [])
        out["tags"].append(tags if not reason else [])
        out["skip"].append(reason)
    return out


def as_story(sentences: list[str], tags: list[list[str]]) -> list[Sentence]:
    return [(s.split(" "), list(t)) for s, t in zip(sentences, tags, strict=True)]


class DatasetDonors:
    """The kept stories as the donor pool of sentence-level substitution (random access by row)."""

    def __init__(self, prepared: datasets.Dataset) -> None:
        self.dataset = prepared.select_columns(["story_index", "sentences", "tags"])

    def __len__(self) -> int:
        return len(self.dataset)

    def story(self, row: int) -> tuple[int, list[Sentence]]:
        record = self.dataset[row]
        return record["story_index"], as_story(record["sentences"], record["tags"])


def story_keywords(
    sentences: list[str], tags: list[list[str]], lexicon: Lexicon
) -> Iterator[tuple[str, str]]:
    """``(tag, lower-cased word)`` of every keyword occurrence in a prepared story."""
    for sentence, sentence_tags in zip(sentences, tags, strict=True):
        for word, tag in zip(sentence.split(" "), sentence_tags, strict=True):
            if lexicon.is_keyword(word, tag):
                yield tag, word.lower()


def count_keywords(prepared: datasets.Dataset, lexicon: Lexicon, batch_size: int = 1000) -> KeywordTable:
    """Keyword counts by POS tag over the whole (kept) corpus, all sentences included."""
    counts: Counter[tuple[str, str]] = Counter()
    for batch in prepared.select_columns(["sentences", "tags"]).iter(batch_size=batch_size):
        for sentences, tags in zip(batch["sentences"], batch["tags"], strict=True):
            counts.update(story_keywords(sentences, tags, lexicon))
    return KeywordTable.from_counts(dict(counts))


def corrupt_batch(
    batch: dict[str, list],
    *,
    seed: int,
    lexicon: Lexicon,
    keywords: KeywordTable,
    donors: DatasetDonors,
    technique_probs: dict[str, float] | None = None,
) -> dict[str, list]:
    out: dict[str, list] = {name: [] for name in OUTPUT_FEATURES}
    for index, sentences, tags in zip(batch["story_index"], batch["sentences"], batch["tags"], strict=True):
        story = as_story(sentences, tags)
        ctx = CorruptionContext(lexicon, keywords, donors, story_index=index, technique_probs=technique_probs)
        corrupted, applied = corrupt(story, StoryRandom(seed, index), ctx)
        if not applied:
            continue  # counted as "uncorruptible" by the caller
        original = " ".join(sentences)
        sample = " ".join([sentences[0]] + [" ".join(tokens) for tokens, _ in corrupted[1:]])
        for text, label, names in ((original, 1, []), (sample, 0, applied)):
            out["text"].append(text)
            out["label"].append(label)
            out["original"].append(original)
            out["context"].append(sentences[0])
            out["corruptions"].append(names)
            out["story_index"].append(index)
    return out


def _code_fingerprint() -> str:
    """Cache key part for the code itself: editing a rule must not reuse an old cached corpus."""
    modules = (
        corruptions,
        grammar,
        negation,
        inspect.getmodule(Lexicon),  # the modules of these names: word knowledge, normalisation
        morphology,
        pos_heuristic,
        inspect.getmodule(StoryNormalization),
        sys.modules[__name__],
    )
    return Hasher.hash([inspect.getsource(module) for module in modules])


def _replace_rows(
    data: datasets.Dataset,
    function: Callable[..., dict[str, list[Any]]],
    *,
    batch_size: int,
    num_proc: int | None,
    features: datasets.Features,
    fingerprint: str,
    desc: str,
    fn_kwargs: dict[str, Any],
    with_indices: bool = False,
) -> datasets.Dataset:
    """``data`` batch-mapped through ``function`` into new rows of ``features`` (no input column kept),
    cached under ``fingerprint`` so that a rebuild with the same inputs reuses it."""
    return data.map(
        function,
        batched=True,
        batch_size=batch_size,
        with_indices=with_indices,
        num_proc=num_proc,
        remove_columns=data.column_names,
        features=features,
        fn_kwargs=fn_kwargs,
        new_fingerprint=fingerprint,
        desc=desc,
    )


def build_union_dataset(
    stories: datasets.Dataset,
    *,
    normalization: StoryNormalization = ROC_STORIES,
    seed: int = 42,
    num_proc: int | None = None,
    batch_size: int = 1000,
    min_sentences: int = 3,
    text_column: str = "text",
    lexicon: Lexicon | None = None,
    technique_probs: Mapping[str, float] | None = None,
) -> datasets.Dataset:
    """UNION's training rows for ``stories`` (a ``text`` column, one story per row).

    Columns: ``text`` (the sample), ``label`` (0 = perturbed, 1 = human), ``original`` (the
    human story), ``context`` (sentence 0), ``corruptions`` (technique names in order, empty
    for human rows), ``story_index`` (input row). Stories with fewer than ``min_sentences``
    sentences, empty or non-text rows are skipped and counted. The output is the same for
    any ``num_proc``/``batch_size``; it depends on ``seed`` and on the lexicon resources,
    which the summary records (:func:`read_summary`). ``technique_probs`` replaces the paper's
    technique weights (``corruptions.TECHNIQUE_PROBS``), e.g. to add ``grammar``; None keeps the
    paper's.
    """
    _check_build_options(stories, text_column, min_sentences)
    probs = None if technique_probs is None else check_technique_probs(technique_probs)
    lexicon = (lexicon or Lexicon()).resolve()
    code = _code_fingerprint()
    prepared = _prepare(
        stories,
        normalization,
        lexicon,
        text_column,
        min_sentences,
        code,
        batch_size=batch_size,
        num_proc=num_proc,
    )
    # datasets returns a column-less dataset when mapping zero rows
    skipped = Counter(reason for reason in prepared["skip"] if reason) if len(prepared) else Counter()
    kept = (
        prepared.filter(lambda reason: reason == "", input_columns="skip", desc="Dropping skipped stories")
        if len(prepared)
        else prepared
    )
    out = _corrupt_kept(kept, lexicon, seed, probs, code, batch_size=batch_size, num_proc=num_proc)
    uncorruptible = len(kept) - len(out) // 2
    if uncorruptible:
        skipped["uncorruptible"] = uncorruptible
    summary = _summary(stories, out, skipped, normalization, lexicon, seed, min_sentences, probs)
    out.info.description = json.dumps(summary, sort_keys=True)
    logger.info("UNION training set built: %s", json.dumps(summary, sort_keys=True))
    return out


def _check_build_options(stories: datasets.Dataset, text_column: str, min_sentences: int) -> None:
    """Fail before any work on stories that are no dataset or lack ``text_column``, or on bad numbers."""
    if not isinstance(stories, datasets.Dataset):
        raise TypeError(f"stories must be a datasets.Dataset, got {type(stories).__name__}")
    if text_column not in stories.column_names:
        raise ValueError(
            f"stories has no column {text_column!r} (columns: {stories.column_names}); "
            "pass text_column= or load the corpus with training.corpora.load_stories"
        )
    if min_sentences < 2:
        raise ValueError(
            f"min_sentences must be at least 2 (context + one sentence to corrupt), got {min_sentences}"
        )


def _prepare(
    stories: datasets.Dataset,
    normalization: StoryNormalization,
    lexicon: Lexicon,
    text_column: str,
    min_sentences: int,
    code: str,
    *,
    batch_size: int,
    num_proc: int | None,
) -> datasets.Dataset:
    """The stories normalised and split into tagged sentences; ``skip`` says why a story is left out ("" if kept)."""
    return _replace_rows(
        stories,
        prepare_batch,
        batch_size=batch_size,
        num_proc=num_proc,
        features=_PREPARED_FEATURES,
        fingerprint=Hasher.hash(
            [
                stories._fingerprint,
                text_column,
                normalization.to_dict(),
                min_sentences,
                lexicon.fingerprint(),
                code,
            ]
        ),
        desc="Normalising and tagging stories",
        with_indices=True,
        fn_kwargs={
            "text_column": text_column,
            "normalization": normalization,
            "lexicon": lexicon,
            "min_sentences": min_sentences,
        },
    )


def _corrupt_kept(
    kept: datasets.Dataset,
    lexicon: Lexicon,
    seed: int,
    probs: dict[str, float] | None,
    code: str,
    *,
    batch_size: int,
    num_proc: int | None,
) -> datasets.Dataset:
    """Each prepared story of ``kept`` as its human row and its corrupted copy (no rows when none is kept)."""
    if len(kept) == 0:
        return datasets.Dataset.from_dict({name: [] for name in OUTPUT_FEATURES}, features=OUTPUT_FEATURES)
    keywords = count_keywords(kept, lexicon, batch_size)
    return _replace_rows(
        kept,
        corrupt_batch,
        batch_size=batch_size,
        num_proc=num_proc,
        features=OUTPUT_FEATURES,
        fingerprint=Hasher.hash([kept._fingerprint, seed, code, probs]),
        desc="Corrupting stories",
        fn_kwargs={
            "seed": seed,
            "lexicon": lexicon,
            "keywords": keywords,
            "donors": DatasetDonors(kept),
            "technique_probs": probs,
        },
    )


def _summary(
    stories: datasets.Dataset,
    out: datasets.Dataset,
    skipped: Counter[str],
    normalization: StoryNormalization,
    lexicon: Lexicon,
    seed: int,
    min_sentences: int,
    technique_probs: dict[str, float] | None,
) -> dict[str, Any]:
    applied = [names for names, label in zip(out["corruptions"], out["label"], strict=True) if label == 0]
    return {
        "stories": len(stories),
        "rows": len(out),
        "kept_stories": len(out) // 2,
        "skipped": {reason: skipped.get(reason, 0) for reason in SKIP_REASONS},
        "corruptions": dict(sorted(Counter(name for names in applied for name in names).items())),
        "techniques_per_story": {
            str(k): v for k, v in sorted(Counter(len(names) for names in applied).items())
        },
        "seed": seed,
        "min_sentences": min_sentences,
        "technique_probs": technique_probs or dict(TECHNIQUE_PROBS),
        CONFIG_KEY: normalization.to_dict(),
        "lexicon": lexicon.describe(),
    }


def read_summary(dataset: datasets.Dataset) -> dict[str, Any]:
    """The build summary :func:`build_union_dataset` stored (normalisation under ``CONFIG_KEY``)."""
    try:
        summary = json.loads(dataset.info.description or "")
    except json.JSONDecodeError as error:
        raise ValueError("this dataset carries no UNION build summary in info.description") from error
    if not isinstance(summary, dict) or CONFIG_KEY not in summary:
        raise ValueError("this dataset carries no UNION build summary in info.description")
    return summary


def normalization_of(dataset: datasets.Dataset) -> StoryNormalization:
    """The :class:`StoryNormalization` a built dataset's text went through (for the checkpoint config)."""
    return StoryNormalization.from_dict(read_summary(dataset)[CONFIG_KEY])


def build_union_copies(
    stories: datasets.Dataset, *, copies: int = 1, seed: int = 42, **options: Any
) -> datasets.Dataset:
    """``copies`` corrupted copies of every story (corpus seeds ``seed`` .. ``seed + copies - 1``), concatenated.

    Each copy is :func:`build_union_dataset` with its own seed and carries its human rows, so
    the classes stay balanced; ``story_index`` is shared across copies, so a held-out split by
    story keeps all copies of a story together. The summary sums the copies' counts and
    records the seeds and the corpus's :func:`corpus_sha256`.
    """
    if copies < 1:
        raise ValueError(f"copies must be at least 1, got {copies}")
    parts = [build_union_dataset(stories, seed=seed + k, **options) for k in range(copies)]
    out = datasets.concatenate_datasets(parts) if copies > 1 else parts[0]
    summaries = [read_summary(part) for part in parts]
    summary = dict(summaries[0])
    if copies > 1:
        summary["rows"] = sum(s["rows"] for s in summaries)
        summary["corruptions"] = dict(
            sorted(sum((Counter(s["corruptions"]) for s in summaries), Counter()).items())
        )
        summary["techniques_per_story"] = dict(
            sorted(sum((Counter(s["techniques_per_story"]) for s in summaries), Counter()).items())
        )
    summary["copies"] = copies
    summary["seeds"] = [seed + k for k in range(copies)]
    summary["sha256"] = corpus_sha256(out)
    out.info.description = json.dumps(summary, sort_keys=True)
    return out
