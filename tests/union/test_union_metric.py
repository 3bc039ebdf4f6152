"""The `union` metric: exact scores, invariances, truncation, bad input, offline loading."""

from __future__ import annotations

import doctest
import hashlib
import importlib
import math
import pathlib
import random

import evaluate
import pytest
import torch
import transformers
from tiny_models import SAMPLE_STORIES, roc_union_checkpoint, save_union_checkpoint

from story_quality.checkpoints.reference import CheckpointReference
from story_quality.union.checkpoints import resolve_checkpoint
from story_quality.union.normalization import ROC_STORIES, StoryNormalization

REPO = pathlib.Path(__file__).resolve().parents[2]
METRIC = str(REPO / "metrics" / "union")
WINDOW = 48
STORIES = SAMPLE_STORIES[:6]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory, WINDOW)


@pytest.fixture(scope="module")
def metric(checkpoint):
    evaluate.logging.disable_progress_bar()
    yield evaluate.load(METRIC, str(checkpoint))
    evaluate.logging.enable_progress_bar()


def direct_scores(
    checkpoint: pathlib.Path, texts: list[str], normalization: StoryNormalization
) -> list[float]:
    """The slow, obvious computation: one text at a time, softmax of class 1 on normalised text."""
    tok = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(checkpoint).eval()
    out = []
    with torch.no_grad():
        for text in texts:
            enc = tok(normalization(text), return_tensors="pt", truncation=True, max_length=WINDOW)
            out.append(torch.softmax(model(**enc).logits, dim=-1)[0, 1].item())
    return out


def test_scores_equal_direct_softmax_on_normalised_text(metric, checkpoint):
    result = metric.compute(predictions=STORIES, batch_size=4)
    expected = direct_scores(checkpoint, STORIES, ROC_STORIES)
    assert result["scores"] == pytest.approx(expected, abs=1e-5)
    assert result["union_score"] == pytest.approx(sum(expected) / len(expected), abs=1e-6)
    assert len(set(round(s, 4) for s in result["scores"])) > 1, "tiny model must not score all texts alike"


def test_checkpoint_without_record_scores_raw_text(tmp_path):
    ckpt = save_union_checkpoint(tmp_path / "raw", normalization=None, max_length=WINDOW)
    metric = evaluate.load(METRIC, str(ckpt))
    assert metric.compute(predictions=STORIES)["scores"] == pytest.approx(
        direct_scores(ckpt, STORIES, StoryNormalization()), abs=1e-5
    )


def test_normalisation_is_applied(metric, checkpoint):
    """A story, its already-normalised form and a differently cased one get the normalised text's score."""
    raw = "Ken didn't go home. He stayed at Mary's house"
    cased = "Ken DIDN'T go HOME. He Stayed AT Mary's House"
    assert cased != raw and ROC_STORIES(cased) == ROC_STORIES(raw)
    scores = metric.compute(predictions=[raw, ROC_STORIES(raw), cased])["scores"]
    expected = direct_scores(checkpoint, [raw], ROC_STORIES)[0]
    assert scores == pytest.approx([expected] * 3, abs=1e-5)
    unnormalised = direct_scores(checkpoint, [raw], StoryNormalization())[0]
    assert abs(unnormalised - expected) > 1e-4, "the test needs a text whose normalisation changes its score"


@pytest.mark.parametrize("batch_size", [1, 2, 5, 64])
def test_batch_size_invariance(metric, batch_size):
    reference = metric.compute(predictions=STORIES, batch_size=3)["scores"]
    assert metric.compute(predictions=STORIES, batch_size=batch_size)["scores"] == pytest.approx(
        reference, abs=1e-5
    )


def test_order_and_companion_invariance(metric):
    reference = dict(zip(STORIES, metric.compute(predictions=STORIES)["scores"], strict=True))
    shuffled = STORIES[:]
    random.Random(3).shuffle(shuffled)
    companions = shuffled + ["a very long companion story about the dog and the cat " * 5]
    scores = metric.compute(predictions=companions, batch_size=2)["scores"]
    for text, score in zip(shuffled, scores, strict=False):
        assert score == pytest.approx(reference[text], abs=1e-5)
    alone = metric.compute(predictions=[STORIES[2]], batch_size=1)["scores"][0]
    assert alone == pytest.approx(reference[STORIES[2]], abs=1e-5)


def test_long_story_is_truncated_keeping_the_head_with_one_warning(metric, checkpoint):
    long_story = "the dog ran to the school and the cat ran to the store . " * 20
    longer = long_story + "then a big new friend came home with the family and they ate ."
    with pytest.warns(
        UserWarning, match=r"2 of 3 stories are longer than the model's window of 48"
    ) as record:
        scores = metric.compute(predictions=[long_story, STORIES[0], longer])["scores"]
    assert len([w for w in record if "window" in str(w.message)]) == 1
    assert scores[0] == pytest.approx(scores[2], abs=1e-6), "only the head may count"
    assert scores[0] == pytest.approx(direct_scores(checkpoint, [long_story], ROC_STORIES)[0], abs=1e-5)


def test_max_length_argument_narrows_the_window(metric, checkpoint):
    with pytest.warns(UserWarning, match="window of 16"):
        short = metric.compute(predictions=[STORIES[0]], max_length=16)["scores"][0]
    tok = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(checkpoint).eval()
    enc = tok(ROC_STORIES(STORIES[0]), return_tensors="pt", truncation=True, max_length=16)
    assert enc["input_ids"].shape[1] == 16
    with torch.no_grad():
        assert short == pytest.approx(torch.softmax(model(**enc).logits, -1)[0, 1].item(), abs=1e-5)


@pytest.mark.parametrize(
    ("predictions", "error", "message"),
    [
        (["fine story .", None], ValueError, r"predictions\[1\] is None"),
        (["fine story .", "ok .", 7], TypeError, r"predictions\[2\] is a int"),
        ([b"bytes"], TypeError, r"predictions\[0\] is a bytes"),
        (["fine .", ""], ValueError, r"predictions\[1\] is empty"),
        (["  \n\t "], ValueError, r"predictions\[0\] is empty, whitespace"),
        ("a bare string", TypeError, "list of strings"),
    ],
)
def test_bad_input_names_the_index(metric, predictions, error, message):
    with pytest.raises(error, match=message):
        metric.compute(predictions=predictions)


def test_bad_batch_size(metric):
    with pytest.raises(ValueError, match="batch_size"):
        metric.compute(predictions=STORIES, batch_size=0)


def test_empty_list_returns_empty_scores_and_nan_mean(metric):
    result = metric.compute(predictions=[])
    assert result["scores"] == [] and math.isnan(result["union_score"])


def _tree_digest(directory: pathlib.Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    } | {str(p.relative_to(directory)) + "/": "dir" for p in directory.rglob("*") if p.is_dir()}


def test_local_checkpoint_directory_is_left_untouched(tmp_path):
    ckpt = save_union_checkpoint(tmp_path / "ckpt", normalization=ROC_STORIES.to_dict(), max_length=WINDOW)
    before = _tree_digest(ckpt)
    metric = evaluate.load(METRIC, str(ckpt))
    metric.compute(predictions=STORIES)
    metric.compute(predictions=STORIES[:2])
    assert _tree_digest(ckpt) == before


def test_model_is_loaded_once_per_instance(checkpoint, monkeypatch):
    metric = evaluate.load(METRIC, str(checkpoint))
    calls = []
    real = transformers.AutoModelForSequenceClassification.from_pretrained
    monkeypatch.setattr(
        transformers.AutoModelForSequenceClassification,
        "from_pretrained",
        lambda *a, **k: calls.append(a) or real(*a, **k),
    )
    metric.compute(predictions=STORIES)
    metric.compute(predictions=STORIES[:1])
    assert calls == []


def test_progress_bar_can_be_silenced(checkpoint, capsys):
    metric = evaluate.load(METRIC, str(checkpoint))
    evaluate.logging.enable_progress_bar()
    metric.compute(predictions=STORIES, batch_size=2)
    assert "UNION" in capsys.readouterr().err
    evaluate.logging.disable_progress_bar()
    try:
        metric.compute(predictions=STORIES, batch_size=2)
        assert "UNION" not in capsys.readouterr().err
    finally:
        evaluate.logging.enable_progress_bar()


def test_checkpoint_with_wrong_label_count_is_rejected(tmp_path):
    ckpt = save_union_checkpoint(tmp_path / "three", max_length=WINDOW)
    config = transformers.AutoConfig.from_pretrained(ckpt)
    config.num_labels = 3
    transformers.BertForSequenceClassification(config).save_pretrained(ckpt)
    with pytest.raises(
        OSError,
        match=r"its 3 labels are \{0: 'LABEL_0', 1: 'LABEL_1', 2: 'LABEL_2'\}; a UNION checkpoint has 2, not 3\.",
    ):
        evaluate.load(METRIC, str(ckpt))


def test_unknown_normalisation_option_is_a_clear_error(tmp_path):
    ckpt = save_union_checkpoint(tmp_path / "future", normalization={"lowercase": True, "stem": True})
    with pytest.raises(ValueError, match=r"Unknown text normalisation option\(s\) \['stem'\]"):
        evaluate.load(METRIC, str(ckpt))


def test_pickle_weights_are_refused(tmp_path):
    """Hub and local loads take safetensors only: a checkpoint with only pickled weights fails."""
    ckpt = save_union_checkpoint(tmp_path / "pickled", max_length=WINDOW)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(ckpt)
    (ckpt / "model.safetensors").unlink()
    torch.save(model.state_dict(), ckpt / "pytorch_model.bin")
    with pytest.raises(OSError):
        evaluate.load(METRIC, str(ckpt))


def test_hub_ids_resolve_to_themselves_and_revisions_split():
    assert resolve_checkpoint("someone/union") == CheckpointReference(
        "someone/union", "someone/union", None, False
    )
    assert resolve_checkpoint("org/model@abc123") == CheckpointReference(
        "org/model@abc123", "org/model", "abc123", False
    )
    assert resolve_checkpoint("org/model").revision is None


@pytest.mark.parametrize("name", ["someone/union", "someone/union@abc123"])
def test_hub_checkpoint_offline_fails_with_one_clear_error(name):
    """Offline, a Hub checkpoint fails fast, naming the id and the shipped default; no socket is opened."""
    with pytest.raises(OSError) as caught:  # CheckpointError of the metric's module-cache copy
        evaluate.load(METRIC, name)
    assert type(caught.value).__name__ == "CheckpointError"
    message = str(caught.value)
    assert resolve_checkpoint(name).source in message and "Hugging Face Hub" in message
    assert (
        "training/train_union.py" in message
        or 'evaluate.load(story_quality.metric_path("union"), "default")' in message
    )


@pytest.mark.parametrize("module", ["story_quality.union.normalization", "story_quality.union.checkpoints"])
def test_module_doctests(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
