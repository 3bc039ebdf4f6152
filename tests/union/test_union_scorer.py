"""UnionScorer: the metric's scores are the scorer's, and the scorer checks what it is given."""

from __future__ import annotations

import math
import pathlib

import evaluate
import pytest
from tiny_models import roc_union_checkpoint

from story_quality import metric_path, precision
from story_quality.union import UnionResult, UnionScorer

STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",
    "the dog ran to the school . the cat ate .",
    "Mary didn't like the new car. She sold it to her friend. Then she bought a bike and rode it home.",
    "He was sad.",
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory)


@pytest.fixture(scope="module")
def scorer(checkpoint) -> UnionScorer:
    return UnionScorer(str(checkpoint))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"batch_size": 1},
        {"max_length": 16, "long_stories": "windows"},
        {"max_length": 16, "long_stories": "head"},
    ],
)
@pytest.mark.filterwarnings("ignore:.*longer than the model.s window")
def test_the_metric_returns_the_scorers_result(checkpoint, scorer, options):
    metric = evaluate.load(metric_path("union"), str(checkpoint))
    result = scorer.score(STORIES, **options)
    assert metric.compute(predictions=STORIES, **options) == result.as_dict()
    assert result.as_dict()["union_score"] == pytest.approx(sum(result.scores) / len(STORIES), abs=1e-12)
    assert len(set(result.scores)) == len(STORIES), "the tiny model must tell the stories apart"


def test_a_result_without_texts_has_no_mean_and_percentiles_only_when_asked(scorer):
    empty = scorer.score([])
    assert empty.scores == [] and math.isnan(empty.mean)
    assert sorted(empty.as_dict()) == ["scores", "signature", "union_score"]
    rescaled = UnionResult([0.5], "union|v0", percentiles=[50.0]).as_dict()
    assert list(rescaled) == ["scores", "union_score", "signature", "percentiles"]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"batch_size": True}, TypeError, "batch_size must be an integer >= 1, got bool True"),
        ({"batch_size": 0}, ValueError, "batch_size must be an integer >= 1, got 0"),
        ({"max_length": 8}, ValueError, "max_length must be an integer >= 16, got 8"),
        ({"max_length": 49}, ValueError, "at most the model's window of 48 word pieces, got 49"),
        ({"long_stories": "tail"}, ValueError, r"long_stories must be one of \['head', 'windows'\]"),
        ({"percentiles": "human"}, ValueError, "percentiles must be one of"),
        ({"device": "gpu"}, ValueError, "device 'gpu' is not a device name"),
        ({"precision": "fp16"}, ValueError, r"precision must be one of \['fp32', 'fp32-onednn', 'bf16'\]"),
    ],
)
def test_bad_options_are_refused_naming_them_before_any_story_is_read(
    scorer, monkeypatch, options, error, message
):
    monkeypatch.setattr(scorer, "logits_fn", lambda *args: pytest.fail("a story was scored"))
    with pytest.raises(error, match=message):
        scorer.score(STORIES, **options)


def test_texts_are_checked_by_the_scorer_too(scorer):
    with pytest.raises(ValueError, match=r"predictions\[1\] is empty"):
        scorer.score([STORIES[0], "  "])
    with pytest.raises(TypeError, match="list of strings"):
        scorer.score(STORIES[0])


@pytest.mark.parametrize("through", ["scorer", "metric"])
def test_warnings_point_at_the_callers_line_either_way_in(checkpoint, scorer, through):
    # One fixed stacklevel is right for one way in only: the metric adds evaluate's frames.
    metric = evaluate.load(metric_path("union"), str(checkpoint))
    long_story = " ".join(["Ken went to the store and bought a lot of milk."] * 8)
    with pytest.warns(UserWarning) as record:
        if through == "scorer":
            scorer.score([long_story, "\U0001f600 \U0001f600 \U0001f600 \U0001f600 dog"], max_length=16)
        else:
            metric.compute(
                predictions=[long_story, "\U0001f600 \U0001f600 \U0001f600 \U0001f600 dog"], max_length=16
            )
    messages = {str(w.message).split(":")[0][:40]: w.filename for w in record}
    assert len(messages) == 2, messages  # the truncation warning and the unread-text warning
    assert set(messages.values()) == {__file__}


def test_bf16_is_autocast_recorded_in_the_signature_and_fp32_is_the_default(checkpoint, scorer, monkeypatch):
    exact = scorer.score(STORIES)
    assert scorer.score(STORIES, precision="fp32") == exact and exact.signature.endswith("|fp32")
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)  # emulated where the CPU lacks it
    metric = evaluate.load(metric_path("union"), str(checkpoint))
    fast = metric.compute(predictions=STORIES, precision="bf16")
    assert fast["signature"] == exact.signature.replace("|fp32", "|bf16-autocast")
    assert fast["scores"] != exact.scores  # bf16 products round differently ...
    assert fast["scores"] == pytest.approx(exact.scores, abs=0.02)  # ... and only a little


def test_fp32_onednn_multiplies_through_onednn_and_says_so(checkpoint, scorer, onednn_calls):
    exact = scorer.score(STORIES)
    assert onednn_calls == []
    metric = evaluate.load(metric_path("union"), str(checkpoint))
    fast = metric.compute(predictions=STORIES, precision="fp32-onednn")
    assert fast["signature"] == exact.signature.replace("|fp32", "|fp32-onednn")
    outputs = {outputs for _, outputs in onednn_calls}
    config = scorer.model.config
    # every layer's products: fused query/key/value, the feed-forward, the classifier's two classes
    assert {3 * config.hidden_size, config.intermediate_size, config.num_labels} <= outputs
    assert fast["scores"] == pytest.approx(exact.scores, abs=1e-5)


def test_a_cpu_without_bf16_refuses_it_before_any_story_is_read(scorer, monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    monkeypatch.setattr(scorer, "logits_fn", lambda *args: pytest.fail("a story was scored"))
    with pytest.raises(ValueError, match=r'precision="bf16" is refused: this CPU \('):
        scorer.score(STORIES, precision="bf16")


def test_a_scorer_named_by_text_reads_a_folder_by_its_absolute_path(checkpoint, monkeypatch):
    """``scorer_for(".")`` inside a checkpoint folder names the folder in the signature, not "."."""
    from story_quality.union.scorer import scorer_for

    monkeypatch.chdir(checkpoint)
    named = scorer_for(".")
    assert named.checkpoint.source == str(checkpoint.resolve())
    assert named.checkpoint.label().startswith(f"{checkpoint.name}@sha256:")
    assert scorer_for("default").checkpoint.config_name


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.filterwarnings("ignore:.*longer than the model.s window")
def test_fp32_through_onednn_stays_within_1e6_of_the_plain_padded_forward(scorer, monkeypatch, threads):
    """What exact means: whichever library fp32 takes, every batch size and thread count scores
    within 1e-6 of the model's own padded fp32 forward through torch's BLAS."""
    import torch

    from story_quality.batching import pad_batch
    from story_quality.union.encoding import encode

    stories = STORIES * 3 + [" ".join(STORIES)]
    encoded = encode(scorer.tokenizer, stories, 48, prepare=scorer.normalization)
    ids, mask = pad_batch(encoded.input_ids, scorer.tokenizer.pad_token_id, "cpu")
    with torch.inference_mode():
        logits = scorer.model(input_ids=ids, attention_mask=mask).logits
    plain = torch.softmax(logits, dim=-1)[:, scorer.label_index].tolist()
    monkeypatch.setenv("STORY_QUALITY_FP32_LIBRARY", "onednn")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for batch_size in (1, 2, 5, 32):
            result = scorer.score(stories, batch_size=batch_size, precision="fp32")
            assert result.signature.endswith("|fp32-onednn")
            assert result.scores == pytest.approx(plain, abs=1e-6, rel=0)
    finally:
        torch.set_num_threads(previous)
