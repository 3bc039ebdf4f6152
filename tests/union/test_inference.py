"""Long and many stories: the union metric prepares and tokenises a chunk at a time, exactly.

Memory must follow the chunk and the window, not the call: no normalised copy of every story and
no full-length tokenisation of every story may exist at once (the peak itself is measured by
``benchmarks/union_memory.py``). These tests pin the behaviour that makes it so, and that the
chunked path gives exactly what one-text-at-a-time head truncation gives.
"""

from __future__ import annotations

import pathlib

import evaluate
import pytest
import transformers
from tiny_models import roc_union_checkpoint

from story_quality.union import encoding
from story_quality.union.encoding import Rows, encode
from story_quality.union.normalization import ROC_STORIES

REPO = pathlib.Path(__file__).resolve().parents[2]
METRIC = str(REPO / "metrics" / "union")
WINDOW = 24
SHORT = "Ken went to the store. He bought milk. He went home happy."
LONG = "the dog ran to the school and the cat ran to the store . " * 6
STORIES = [SHORT, LONG, "He was sad.", LONG + " then Mary came home .", SHORT * 2, "Tom ate.", LONG * 2]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory, WINDOW)


@pytest.fixture(scope="module")
def tokenizer(checkpoint):
    return transformers.AutoTokenizer.from_pretrained(checkpoint)


@pytest.fixture()
def metric(checkpoint):
    evaluate.logging.disable_progress_bar()
    yield evaluate.load(METRIC, str(checkpoint))
    evaluate.logging.enable_progress_bar()


class RecordingTokenizer:
    """Passes every call to the real tokenizer, recording how many texts each call held."""

    def __init__(self, tokenizer, events: list):
        self._tokenizer, self._events = tokenizer, events

    def __call__(self, texts, *args, **kwargs):
        if isinstance(texts, list):
            self._events.append(("tokenise", len(texts)))
        return self._tokenizer(texts, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 100])
def test_chunked_encoding_equals_head_truncation_one_text_at_a_time(tokenizer, chunk_size):
    encoded = encode(tokenizer, STORIES, WINDOW, prepare=ROC_STORIES, chunk_size=chunk_size)
    for i, story in enumerate(STORIES):
        one = tokenizer(ROC_STORIES(story), truncation=True, max_length=WINDOW)["input_ids"]
        assert list(encoded.input_ids[i]) == one, i
    full_lengths = [len(tokenizer(ROC_STORIES(s), verbose=False)["input_ids"]) for s in STORIES]
    assert encoded.truncated == [i for i, n in enumerate(full_lengths) if n > WINDOW]
    assert encoded.truncated == [1, 3, 4, 6]


def test_each_text_is_prepared_just_before_its_chunk_is_tokenised(tokenizer):
    events: list = []

    def prepare(text: str) -> str:
        events.append(("prepare", 1))
        return ROC_STORIES(text)

    progress: list[int] = []
    encode(
        RecordingTokenizer(tokenizer, events),
        STORIES,
        WINDOW,
        prepare,
        chunk_size=3,
        progress=progress.append,
    )
    calls = [n for kind, n in events if kind == "tokenise"]
    assert calls == [3, 3, 1] and progress == [3, 3, 1]
    prepared_before = []
    count = 0
    for kind, _ in events:
        if kind == "prepare":
            count += 1
        else:
            prepared_before.append(count)
    assert prepared_before == [3, 6, 7], "a chunk is prepared only when it is about to be tokenised"


def test_bad_chunk_size_is_refused(tokenizer):
    with pytest.raises(ValueError, match="chunk_size must be a positive integer, got 0"):
        encode(tokenizer, STORIES, WINDOW, chunk_size=0)


def test_the_metric_tokenises_a_chunk_at_a_time_with_one_warning_and_the_same_scores(metric, monkeypatch):
    with pytest.warns(UserWarning, match=r"4 of 7 stories .* \(first: predictions\[1\]\)") as record:
        whole = metric.compute(predictions=STORIES, batch_size=2)["scores"]
    assert len([w for w in record if "window" in str(w.message)]) == 1

    events: list = []
    monkeypatch.setattr(encoding, "ENCODE_CHUNK", 2)
    monkeypatch.setattr(metric.scorer, "tokenizer", RecordingTokenizer(metric.scorer.tokenizer, events))
    with pytest.warns(UserWarning, match=r"4 of 7 stories .* \(first: predictions\[1\]\)") as record:
        chunked = metric.compute(predictions=STORIES, batch_size=2)["scores"]
    assert len([w for w in record if "window" in str(w.message)]) == 1
    assert [n for _, n in events] == [2, 2, 2, 1]
    assert chunked == whole, "chunking must not change a single bit of any score"


@pytest.mark.filterwarnings("ignore:.*longer than the model.s window")
def test_direct_compute_equals_evaluates_add_batch_path(metric):
    direct = metric.compute(predictions=STORIES)
    metric.add_batch(predictions=STORIES[:4])
    metric.add_batch(predictions=STORIES[4:])
    gathered = metric.compute()
    assert gathered == direct


def test_add_batch_path_names_a_bad_story_before_it_is_stored(metric):
    with pytest.raises(ValueError, match=r"predictions\[1\] is None"):
        metric.add_batch(predictions=[SHORT, None])
    with pytest.raises(TypeError, match=r"predictions\[1\] is a int, not a string: 5"):
        metric.add_batch(predictions=[SHORT, 5])
    with pytest.raises(TypeError, match=r"predictions\[0\] is a int"):
        metric.add(prediction=5)
    with pytest.raises(ValueError, match=r"predictions is missing: pass predictions="):
        metric.compute()


def test_rows_hold_each_row_whole_and_in_order():
    rows = Rows()
    for row in ([101, 7, 102], [101, 102], [101, 9, 9, 9, 102]):
        rows.append(row)
    assert len(rows) == 3
    assert [list(r) for r in rows] == [[101, 7, 102], [101, 102], [101, 9, 9, 9, 102]]
    assert list(rows[-1]) == [101, 9, 9, 9, 102]
    with pytest.raises(IndexError, match="row 3 of 3"):
        rows[3]
