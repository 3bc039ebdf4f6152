"""Reading a long story whole (``long_stories="windows"``): packing, exact ids, scores against a slow reference."""

from __future__ import annotations

import logging
import pathlib
import random

import evaluate
import pytest
import torch
import transformers
from tiny_models import WORDS, save_union_checkpoint, tokenizer

from story_quality.union.encoding import encode
from story_quality.union.normalization import ROC_STORIES, StoryNormalization
from story_quality.union.windows import encode_windows, pack_windows, story_means, text_and_sentence_starts

REPO = pathlib.Path(__file__).resolve().parents[2]
METRIC = str(REPO / "metrics" / "union")
WINDOW = 48


def story(sentences: int, seed: int, longest: int = 12) -> str:
    rng = random.Random(seed)
    return " ".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, longest))).capitalize() + rng.choice(".!?")
        for _ in range(sentences)
    )


LONG = [story(n, seed) for seed, n in enumerate((1, 3, 9, 14, 30))] + [story(4, 99, longest=70)]


@pytest.mark.parametrize("budget", [1, 3, 5, 8, 40])
def test_packed_windows_cover_every_token_once_and_cut_only_between_sentences(budget):
    rng = random.Random(budget)
    for _ in range(50):
        bounds, position = [], 0
        for _ in range(rng.randint(1, 12)):
            length = rng.randint(0, 12)
            bounds.append((position, position + length))
            position += length
        windows = pack_windows(bounds, budget)
        assert [t for first, last in windows for t in range(first, last)] == list(range(position))
        assert all(0 < last - first <= budget for first, last in windows)
        sentence_starts = {first for first, _ in bounds}
        long_sentences = [(a, b) for a, b in bounds if b - a > budget]
        for first, _ in windows:
            assert first in sentence_starts or any(a < first < b for a, b in long_sentences)
        # greedy: the next window's first sentence would not have fitted
        for (first, last), (next_first, _) in zip(windows, windows[1:], strict=False):
            following = max((b for a, b in bounds if a == next_first), default=None)
            if following is not None and last == next_first:
                assert following - first > budget


def test_sentence_starts_point_at_each_normalised_sentence():
    text, starts = text_and_sentence_starts(ROC_STORIES, "Tom didn't go. Mary stayed home! It rained")
    assert text == ROC_STORIES("Tom didn't go. Mary stayed home! It rained")
    assert [text[s:].split(" . ")[0].split(" ! ")[0] for s in starts] == [
        "[MALE] did n't go",
        "[FEMALE] stayed home",
        "it rained .",
    ]
    raw, raw_starts = text_and_sentence_starts(StoryNormalization(), "One two.  Three four.")
    assert raw == "One two.  Three four." and raw_starts == [0, 10]


@pytest.mark.parametrize("normalization", [ROC_STORIES, StoryNormalization()])
def test_a_story_that_fits_is_one_window_with_the_head_paths_ids(normalization):
    tok = tokenizer(model_max_length=WINDOW)
    texts = [s for s in LONG if len(tok(normalization(s))["input_ids"]) <= WINDOW]
    assert len(texts) >= 2
    windows = encode_windows(tok, texts, WINDOW, normalization)
    head = encode(tok, texts, WINDOW, prepare=normalization)
    assert list(windows.story_of) == list(range(len(texts)))
    assert [list(r) for r in windows.input_ids] == [list(r) for r in head.input_ids]


def test_long_stories_are_cut_into_windows_that_rebuild_the_whole_text(caplog):
    tok = tokenizer(model_max_length=WINDOW)
    transformers.utils.logging.enable_propagation()
    try:
        with caplog.at_level(logging.WARNING):
            encoded = encode_windows(tok, LONG, WINDOW, ROC_STORIES, chunk_size=2)
    finally:
        transformers.utils.logging.disable_propagation()
    assert not [r for r in caplog.records if "sequence length" in r.getMessage()]  # whole stories on purpose
    cls, sep = tok.cls_token_id, tok.sep_token_id
    for i, text in enumerate(LONG):
        rows = [list(r) for r, owner in zip(encoded.input_ids, encoded.story_of, strict=True) if owner == i]
        assert all(r[0] == cls and r[-1] == sep and len(r) <= WINDOW for r in rows)
        assert [t for r in rows for t in r[1:-1]] == tok(ROC_STORIES(text), add_special_tokens=False)[
            "input_ids"
        ]
    assert encoded.truncated == [] and max(encoded.story_of) == len(LONG) - 1


def test_story_means_weigh_each_storys_windows_by_their_length():
    encoded = encode_windows(tokenizer(model_max_length=WINDOW), LONG[:4], WINDOW, ROC_STORIES)
    scores = [float(i) for i in range(len(encoded.input_ids))]
    means = story_means(scores, encoded, 4)
    for i, mean in enumerate(means):
        mine = [
            (s, len(r)) for s, r, o in zip(scores, encoded.input_ids, encoded.story_of, strict=True) if o == i
        ]
        assert mean == pytest.approx(sum(s * n for s, n in mine) / sum(n for _, n in mine))
    assert len({len(r) for r in encoded.input_ids}) > 1  # the weights matter here


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, pathlib.Path]:
    root = tmp_path_factory.mktemp("union-windows")
    return {
        reading: save_union_checkpoint(
            root / str(reading), normalization=ROC_STORIES.to_dict(), max_length=WINDOW, long_stories=reading
        )
        for reading in (None, "windows")
    }


def reference_window_scores(checkpoint: pathlib.Path, text: str) -> list[tuple[float, int]]:
    """The slow way: pack normalised sentences by their own token counts, score each window alone.

    Each window's score with its length in word pieces (special tokens included).
    """
    tok = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(checkpoint).eval()
    budget = WINDOW - 2
    windows, current = [], []
    for sentence in ROC_STORIES.sentences(text):
        ids = tok(sentence, add_special_tokens=False)["input_ids"]
        if current and len(current) + len(ids) <= budget:
            current += ids
            continue
        if current:
            windows.append(current)
        current = ids
        while len(current) > budget:
            windows.append(current[:budget])
            current = current[budget:]
    windows.append(current)
    with torch.no_grad():
        scores = [
            torch.softmax(
                model(input_ids=torch.tensor([[tok.cls_token_id, *w, tok.sep_token_id]])).logits, -1
            )[0, 1].item()
            for w in windows
        ]
    return list(zip(scores, [len(w) + 2 for w in windows], strict=True))


def test_the_metric_averages_window_scores_as_the_slow_reference_does(checkpoints):
    evaluate.logging.disable_progress_bar()
    metric = evaluate.load(METRIC, str(checkpoints["windows"]))
    result = metric.compute(predictions=LONG, batch_size=3)
    for text, score in zip(LONG, result["scores"], strict=True):
        windows = reference_window_scores(checkpoints["windows"], text)
        assert score == pytest.approx(sum(s * n for s, n in windows) / sum(n for _, n in windows), abs=1e-5)
    assert "|long:windows|" in result["signature"]
    # each story's score depends on nothing else in the call
    alone = [metric.compute(predictions=[text], batch_size=1)["scores"][0] for text in LONG]
    assert alone == pytest.approx(result["scores"], abs=1e-5)


def test_the_checkpoints_record_decides_and_the_caller_overrides(checkpoints):
    evaluate.logging.disable_progress_bar()
    plain = evaluate.load(METRIC, str(checkpoints[None]))
    windowed = evaluate.load(METRIC, str(checkpoints["windows"]))
    with pytest.warns(UserWarning, match="truncated"):
        head = plain.compute(predictions=LONG)
    assert "|long:head|" in head["signature"]
    with pytest.warns(UserWarning, match="truncated"):
        assert windowed.compute(predictions=LONG, long_stories="head")["scores"] == head["scores"]
    assert plain.compute(predictions=LONG, long_stories="windows")["scores"] == pytest.approx(
        windowed.compute(predictions=LONG)["scores"], abs=1e-6
    )
    fits = [text for text in LONG if len(ROC_STORIES(text).split()) < 20]
    assert windowed.compute(predictions=fits)["scores"] == plain.compute(predictions=fits)["scores"]
    with pytest.raises(ValueError, match="long_stories must be one of"):
        plain.compute(predictions=LONG, long_stories="tail")


def test_an_unknown_recorded_reading_is_refused(tmp_path):
    folder = save_union_checkpoint(
        tmp_path / "odd", normalization=ROC_STORIES.to_dict(), long_stories="sideways"
    )
    with pytest.raises(ValueError, match="union_long_stories"):
        evaluate.load(METRIC, str(folder))
