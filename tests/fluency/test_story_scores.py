"""A story's fluency from its sentences: each kind against a plain reference, batch invariance, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from story_quality.fluency.percentiles import PercentileTable
from story_quality.fluency.reader import FluencyReader, NotAFluencyReader
from story_quality.fluency.slor import SlorModel
from story_quality.fluency.story_scores import STORY_SCORES, read_stories, sentence_scorer, story_score
from story_quality.fluency.text import read_sentences
from tests.fluency_models import save_fluency_reader

HUMAN = [
    "The dog ran home. It was happy.",
    "A cat sat on the mat. The cat slept. Then the dog came.",
    "he did n't go . she said so .",
]
STORIES = ["Dog the home ran. It was happy. The cat sat.", "The dog slept.", "", "ran ran ran. the the."]


@pytest.fixture(scope="module")
def slor_dir(tmp_path_factory):
    sentences = [s for text in HUMAN for s in read_sentences(text)]
    folder = SlorModel.count(sentences).write(tmp_path_factory.mktemp("slor") / "lm")
    scores = np.linspace(-2, 2, 40)
    PercentileTable.build(scores, [3] * 20 + [9] * 20, bounds=(5, None)).write(folder)
    return folder


@pytest.mark.parametrize("kind", STORY_SCORES)
def test_each_kind_against_its_plain_definition(slor_dir, kind):
    score = sentence_scorer(slor_dir)
    table = PercentileTable.read(slor_dir)
    for text in STORIES:
        sentences = read_sentences(text)
        values = [float(score([s])[0]) for s in sentences]
        if kind.endswith("percentile"):
            values = [
                float(table.percentiles([v], [len(s.split())])[0])
                for v, s in zip(values, sentences, strict=True)
            ]
        ordered = sorted(values)
        expected = sum(values) / len(values) if kind.startswith("mean") else ordered[min(1, len(ordered) - 1)]
        story = read_stories(score, [text])[0]
        assert story_score(story, kind, table) == pytest.approx(expected, abs=1e-12)


def test_a_story_scores_the_same_alone_and_in_any_batch(slor_dir):
    score, table = sentence_scorer(slor_dir), PercentileTable.read(slor_dir)
    for order in (STORIES, STORIES[::-1], STORIES * 2):
        together = read_stories(score, order)
        for text, story in zip(order, together, strict=True):
            alone = read_stories(score, [text])[0]
            assert story == alone
            assert [story_score(story, k, table) for k in STORY_SCORES] == [
                story_score(alone, k, table) for k in STORY_SCORES
            ]


def test_refusals(tmp_path, slor_dir):
    with pytest.raises(NotAFluencyReader, match="not a folder"):
        sentence_scorer(tmp_path / "missing")
    with pytest.raises(NotAFluencyReader, match="nor a SLOR reader"):
        sentence_scorer(tmp_path)
    story = read_stories(sentence_scorer(slor_dir), ["The dog ran."])[0]
    with pytest.raises(ValueError, match="needs a percentile table"):
        story_score(story, "mean-percentile")
    with pytest.raises(ValueError, match="unknown story score 'median'"):
        story_score(story, "median")


def test_a_fluency_classifier_reads_stories_as_its_own_sentence_logits(tmp_path):
    folder = save_fluency_reader(tmp_path / "reader")
    score = sentence_scorer(folder)
    reader = FluencyReader(folder)
    together = read_stories(score, STORIES)
    for text, story in zip(STORIES, together, strict=True):
        alone = reader.read([text])[0]
        np.testing.assert_allclose(story.scores, alone.logits, rtol=0, atol=1e-5)
        assert story_score(story, "mean") == pytest.approx(alone.mean_logit, abs=1e-5)
