"""Human stories for UNION's training set, from the Hub or from local files, one story per row.

Hub datasets this project was written for (the code reads them by their columns, so other
copies with the same layout work too):

* ROCStories: ``mintujupally/ROCStories`` (a ``text`` column, one five-sentence story per
  row). Copies with the original CSV layout (``sentence1`` .. ``sentence5``) are joined.
* WritingPrompts: ``euclaise/writingprompts`` (``prompt`` and ``story``; splits train,
  validation, test). The prompt becomes sentence 0 (its ``[ WP ]`` tag removed), the story
  is cut to about 200 words at a sentence boundary, as in UNION's WP data. A row without a
  prompt keeps the story's first sentence as its leading context.

Local files: ``.txt`` (one story per line), ``.jsonl``/``.json`` (a list of objects, or
one object per line) and ``.csv`` (with a header), read with the same column rules.
"""

from __future__ import annotations

import html
import logging
import os
import pathlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

import datasets

from story_quality.input_files import RECORD_SUFFIXES, read_records
from story_quality.union.normalization import StoryNormalization, split_sentences

logger = logging.getLogger(__name__)

ROC_STORIES_HUB_ID = "mintujupally/ROCStories"
WRITING_PROMPTS_HUB_ID = "euclaise/writingprompts"
LOCAL_SUFFIXES = RECORD_SUFFIXES
ROC_SENTENCE_COLUMNS = tuple(f"sentence{i}" for i in range(1, 6))
WP_STORY_WORDS = 200
_WP_TAG = re.compile(r"^\s*(?:\[\s*[A-Za-z]{2,3}\s*\]\s*)+")
_WP_NEWLINE = re.compile(r"\s*<\\?newline>\s*")
# Reddit markdown in raw WritingPrompts posts: links keep their text; emphasis marks, rules,
# quote marks, backslash escapes and bare URLs go (no story generator writes them, so a model
# would learn "markdown = human").
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_URL = re.compile(r"https?://\S+")
_MD_ESCAPE = re.compile(r"\\([\\*_\[\]()#>~`-])")
_MD_RULE = re.compile(r"[*_~=-]{3,}")
_MD_EMPHASIS = re.compile(r"(?<![\w*_~])[*_~]{1,2}(?=\S)|(?<=\S)[*_~]{1,2}(?![\w*_~])")
_MD_QUOTE = re.compile(r"(?:(?<=\n)|^|(?<=\s))(?:>\s*)+(?=\S)")
_MD_HEADER = re.compile(r"(?m)^\s*#{1,6}\s+")


def cut_story(story: str, max_words: int = WP_STORY_WORDS) -> list[str]:
    """The story's first sentences, ending at the sentence boundary closest to ``max_words`` words.

    >>> cut_story("One two three. Four five. Six seven eight nine.", max_words=4)
    ['One two three.']
    >>> cut_story("One two three four five six.", max_words=2)
    ['One two three four five six.']
    """
    sentences = split_sentences(story)
    return sentences[: _head_length(sentences, max_words)]


def _head_length(sentences: Sequence[str], max_words: int) -> int:
    """How many leading sentences end at the boundary closest to ``max_words`` words (at least 1)."""
    best, best_gap, words = 1, None, 0
    for end, sentence in enumerate(sentences, 1):
        words += len(sentence.split())
        gap = abs(words - max_words)
        if best_gap is None or gap < best_gap:
            best, best_gap = end, gap
        if words >= max_words:
            break
    return best


def plain_story_text(text: str) -> str:
    """``text`` without Reddit markdown and HTML entities; plain prose is unchanged.

    >>> plain_story_text("It 's a **good** feeling, _you_ know &amp; [more](https://x.y/z) ***")
    "It 's a good feeling, you know & more  "
    >>> plain_story_text("> I AM HE\\n> WHO IS `` Nah . ''")
    "I AM HE\\nWHO IS `` Nah . ''"
    """
    text = html.unescape(_MD_ESCAPE.sub(r"\1", text))
    text = _MD_URL.sub("", _MD_LINK.sub(r"\1", text))
    text = _MD_HEADER.sub("", _MD_RULE.sub(" ", text))
    return _MD_QUOTE.sub("", _MD_EMPHASIS.sub("", text))


def writing_prompts_text(prompt: Any, story: Any, max_words: int = WP_STORY_WORDS) -> str | None:
    """One WritingPrompts row as UNION's story: the prompt line, then the cut story's sentences.

    ``<newline>`` markers become line breaks; the ``[ WP ]``-style tags of the prompt are
    dropped. Without a prompt (None or blank) the story's own first sentence is the leading
    context, and the story is cut the same way. A non-text story gives None (skipped
    downstream as empty).

    >>> writing_prompts_text("[ WP ] Cats rule.", "One two. Three four five.", max_words=2)
    'Cats rule.\\nOne two.'
    >>> writing_prompts_text(None, "One two. Three four five. Six.", max_words=5)
    'One two.\\nThree four five.'
    """
    if not isinstance(story, str) or prompt is not None and not isinstance(prompt, str):
        return None
    prompt = " ".join(_WP_TAG.sub("", _WP_NEWLINE.sub(" ", plain_story_text(prompt or ""))).split())
    sentences = cut_story(_WP_NEWLINE.sub("\n", plain_story_text(story)), max_words)
    if not sentences:
        return None
    return "\n".join([prompt, *sentences] if prompt else sentences)


def writing_prompts_segments(
    prompt: Any, story: Any, max_words: int = WP_STORY_WORDS, max_segments: int | None = None
) -> list[str]:
    """A whole WritingPrompts story as consecutive texts of about ``max_words`` words each.

    The first is :func:`writing_prompts_text` (the prompt, then the story's head); each later
    one takes the next sentences, cut the same way, and opens with its own first sentence as
    leading context; ``max_segments`` keeps the first ones only. The ``union`` metric reads a
    long story in pieces of this kind (``long_stories="windows"``), so a model trained on them
    has seen more than the opening of a story.

    >>> writing_prompts_segments("[ WP ] Cats rule.", "One two. Three four. Five six. Seven.", max_words=4)
    ['Cats rule.\\nOne two.\\nThree four.', 'Five six.\\nSeven.']
    >>> writing_prompts_segments(None, 7)
    []
    """
    if not isinstance(story, str) or prompt is not None and not isinstance(prompt, str):
        return []
    first = writing_prompts_text(prompt, story, max_words)
    if first is None:
        return []
    # the story is split once; every segment is cut from that one list of sentences
    sentences = split_sentences(_WP_NEWLINE.sub("\n", plain_story_text(story)))
    segments = [first]
    start = _head_length(sentences, max_words)
    while start < len(sentences) and (max_segments is None or len(segments) < max_segments):
        end = start + _head_length(sentences[start:], max_words)
        segments.append("\n".join(sentences[start:end]))
        start = end
    return segments


def _join_sentences(row: dict[str, Any]) -> str | None:
    parts = [row.get(column) for column in ROC_SENTENCE_COLUMNS]
    if not all(isinstance(part, str) for part in parts):
        return None
    return " ".join(part.strip() for part in parts)


def _story_builder(columns: Iterable[str], text_column: str | None, source: str, segments: int = 1):
    """How a row becomes its story texts, chosen from the columns (or the explicit ``text_column``).

    A WritingPrompts row gives up to ``segments`` texts (:func:`writing_prompts_segments`), any
    other row one.
    """
    columns = list(columns)
    if text_column is not None:
        if text_column not in columns:
            raise ValueError(f"{source} has no column {text_column!r}; its columns are {columns}")
        return text_column, lambda row: row[text_column]
    if "prompt" in columns and "story" in columns:
        if segments > 1:
            # a tuple (never a value read from a file): the row's several texts
            return "prompt+story", lambda row: tuple(
                writing_prompts_segments(row["prompt"], row["story"], max_segments=segments) or [None]
            )
        return "prompt+story", lambda row: writing_prompts_text(row["prompt"], row["story"])
    if "text" in columns:
        return "text", lambda row: row["text"]
    if all(column in columns for column in ROC_SENTENCE_COLUMNS):
        return "sentence1..sentence5", _join_sentences
    raise ValueError(
        f"{source}: cannot tell which column holds the stories (columns: {columns}); "
        "pass text_column=, or provide 'text', 'prompt'+'story' or 'sentence1'..'sentence5'"
    )


def _read_local_rows(path: pathlib.Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Rows of a local corpus file and the line each starts on (read by the library's one reader)."""
    records = read_records(path)
    return records.rows, records.lines


def _to_dataset(
    rows: Iterable[dict[str, Any]],
    columns: list[str],
    text_column: str | None,
    source: str,
    lines: Sequence[int] | None = None,
    segments: int = 1,
):
    name, build = _story_builder(columns, text_column, source, segments)
    texts, refused = [], 0
    for i, row in enumerate(rows):
        try:
            value = build(row)
        except KeyError as error:
            where = f"line {lines[i]}" if lines is not None else f"row {i}"
            raise ValueError(
                f"{source}, {where}: no {error.args[0]!r} field (the story column, {name}); every row needs it."
            ) from None
        for text in value if isinstance(value, tuple) else [value]:
            if text is not None and not isinstance(text, str):
                text, refused = None, refused + 1
            texts.append(text)
    if refused:
        logger.warning("%s: %d rows have a non-text %r value; they count as empty", source, refused, name)
    return datasets.Dataset.from_dict(
        {"text": texts}, features=datasets.Features({"text": datasets.Value("string")})
    )


def load_stories(
    source: str,
    *,
    split: str = "train",
    text_column: str | None = None,
    max_rows: int | None = None,
    revision: str | None = None,
    segments: int = 1,
) -> datasets.Dataset:
    """A ``datasets.Dataset`` with one ``text`` column, one story per row (None for unusable rows).

    ``source``: a local ``.txt``/``.jsonl``/``.json``/``.csv`` file or a Hub dataset id
    (e.g. :data:`ROC_STORIES_HUB_ID`, :data:`WRITING_PROMPTS_HUB_ID`; ``split`` and
    ``revision`` apply). ``text_column`` names the story column; by default it is found from
    the columns (``prompt``+``story`` for WritingPrompts, ``text``, or ``sentence1``..``5``).
    ``max_rows`` keeps the first rows only (quick runs). ``segments`` > 1 reads each
    WritingPrompts story as up to that many consecutive texts (:func:`writing_prompts_segments`).
    """
    if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
        raise ValueError(f"segments must be a positive integer, got {segments!r}")
    path = pathlib.Path(source)
    kind = path.suffix.lower()
    if kind in LOCAL_SUFFIXES or path.exists():
        if not path.is_file():
            raise FileNotFoundError(f"Story file not found: {source}")
        if kind not in LOCAL_SUFFIXES:
            raise ValueError(f"{source}: unsupported file type; use one of {', '.join(LOCAL_SUFFIXES)}")
        rows, lines = _read_local_rows(path)
        if max_rows is not None:
            rows = rows[:max_rows]
        columns = list(dict.fromkeys(key for row in rows[:1000] for key in row)) or ["text"]
        return _to_dataset(rows, columns, text_column, os.fspath(source), lines, segments)
    hub = datasets.load_dataset(source, split=split, revision=revision)
    if max_rows is not None:
        hub = hub.select(range(min(max_rows, len(hub))))
    name, build = _story_builder(hub.column_names, text_column, source, segments)
    if name == "text" and hub.column_names == ["text"]:
        return hub

    def texts(rows: dict[str, list]) -> dict[str, list]:
        built = [build(dict(zip(rows, values, strict=True))) for values in zip(*rows.values(), strict=True)]
        return {"text": [t for value in built for t in (value if isinstance(value, tuple) else [value])]}

    return hub.map(
        texts,
        batched=True,
        remove_columns=hub.column_names,
        features=datasets.Features({"text": datasets.Value("string")}),
        desc=f"Reading stories ({name})",
    )


def held_out_contexts(held_out: Sequence[str], normalization: StoryNormalization) -> set[str]:
    """The leading sentences (normalised) of ``held_out``: the contexts training must not open with."""
    first = [normalization.sentences(story)[:1] for story in held_out]
    return {sentences[0] for sentences in first if sentences}


def drop_shared_contexts(
    stories: datasets.Dataset, held_out: Sequence[str], normalization: StoryNormalization
) -> tuple[datasets.Dataset, int]:
    """Drop the stories whose leading sentence (normalised) opens any of ``held_out``; also the count.

    An evaluation set generated from test contexts leaks into training when a training story
    shares its context; compared after ``normalization``, so raw and normalised copies match.
    """
    contexts = held_out_contexts(held_out, normalization)

    def keep(text: str | None) -> bool:
        sentences = normalization.sentences(text) if text else []
        return not sentences or sentences[0] not in contexts

    kept = stories.filter(keep, input_columns="text", desc="Dropping stories that share a held-out context")
    return kept, len(stories) - len(kept)
