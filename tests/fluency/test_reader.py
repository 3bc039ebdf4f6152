"""The fluency reader: sentence logits against a slow reference, batch invariance, refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from story_quality.fluency.reader import FluencyReader, NotAFluencyReader, is_fluency_reader
from story_quality.fluency.text import story_sentences
from tests import tiny_models
from tests.fluency_models import save_fluency_reader

STORIES = [
    "The dog ran home. It was happy to see its family. Then it ate.",
    "he did n't go to the store . she said so .",
    "Cat the of home. Went went the dog dog.",
    "One.",
]


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory):
    return save_fluency_reader(tmp_path_factory.mktemp("reader") / "reader")


def slow_logits(folder, sentence: str) -> float:
    """One sentence alone, through the model's own forward: human minus generated."""
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(**tok(sentence, return_tensors="pt", truncation=True, max_length=32)).logits[0]
    return float(logits[1] - logits[0])


def test_each_story_is_the_mean_of_its_sentences_read_alone(reader_dir):
    reader = FluencyReader(reader_dir)
    for story, read in zip(STORIES, reader.read(STORIES, batch_size=3), strict=True):
        expected = [slow_logits(reader_dir, s) for s in story_sentences(story)]
        np.testing.assert_allclose(read.logits, expected, atol=1e-5)
        assert read.mean_logit == pytest.approx(np.mean(expected), abs=1e-5)
        assert read.flagged_share == pytest.approx(np.mean(np.array(expected) < 0))


def test_a_story_reads_the_same_alone_and_in_any_batch(reader_dir):
    reader = FluencyReader(reader_dir)
    together = [s.mean_logit for s in reader.read(STORIES, batch_size=2)]
    for size in (1, 5, 64):
        assert [s.mean_logit for s in reader.read(STORIES, batch_size=size)] == pytest.approx(
            together, abs=1e-6
        )
    for i, story in enumerate(STORIES):
        assert reader.read([story])[0].mean_logit == pytest.approx(together[i], abs=1e-6)


def test_a_union_checkpoint_or_a_plain_folder_is_refused_naming_why(tmp_path):
    union = tiny_models.save_union_checkpoint(tmp_path / "union")
    assert not is_fluency_reader(union)
    with pytest.raises(NotAFluencyReader, match="does not mark a fluency reader"):
        FluencyReader(union)
    with pytest.raises(NotAFluencyReader, match="no config.json"):
        FluencyReader(tmp_path)
    with pytest.raises(NotAFluencyReader, match="is not a folder"):
        FluencyReader(tmp_path / "missing")


def test_a_reader_whose_labels_were_changed_is_refused(reader_dir, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(reader_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    config["id2label"] = {"0": "human", "1": "generated"}
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(NotAFluencyReader, match="has labels"):
        FluencyReader(copy)
