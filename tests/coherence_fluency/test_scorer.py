"""coherence_fluency: the fused score is its parts combined by the reader's constants, whatever the batch."""

from __future__ import annotations

import json

import pytest

from story_quality.coherence_fluency.scorer import CoherenceFluencyScorer
from story_quality.fluency.fusion import Fusion, story_words
from story_quality.fluency.reader import FluencyReader, NotAFluencyReader
from story_quality.signature import Signature
from story_quality.union.scorer import UnionScorer
from tests.fluency_models import save_fluency_reader

STORIES = [
    "The dog ran home. It was happy to see its family. Then it ate.",
    "he did n't go to the store . she said so .",
    "Cat the of home. Went went the dog dog.",
    " ".join(["The man walked to school and saw his friend there."] * 12),  # longer than the tiny window
]


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory):
    return save_fluency_reader(tmp_path_factory.mktemp("cf") / "reader")


def test_the_fused_score_is_the_parts_combined_by_the_shipped_constants(reader_dir):
    result = CoherenceFluencyScorer(str(reader_dir)).score(STORIES, batch_size=2)
    fusion = Fusion.read(reader_dir)
    union = UnionScorer(fusion.union_checkpoint).score(STORIES, long_stories="windows").scores
    fluency = [s.mean_logit for s in FluencyReader(reader_dir).read(STORIES)]
    assert result.union == pytest.approx(union, abs=1e-6)
    assert result.fluency == pytest.approx(fluency, abs=1e-6)
    expected = [
        fusion.combine({"union": u, "fluency": f}, story_words(text))
        for text, u, f in zip(STORIES, union, fluency, strict=True)
    ]
    long = STORIES[3]  # over 40 words: UNION's z alone, by the second regime's weights
    assert story_words(long) > 40 and result.scores[3] == pytest.approx((union[3] - 0.5) / 0.2, abs=1e-5)
    assert result.scores == pytest.approx(expected, abs=1e-5)
    assert len(set(result.scores)) == len(STORIES)  # the parts' weights make a difference between stories
    signature = Signature.parse(result.signature)
    assert signature.metric == "coherence_fluency" and signature["reader"].startswith("reader@sha256:")


def test_a_story_scores_the_same_alone_and_in_any_batch(reader_dir):
    scorer = CoherenceFluencyScorer(str(reader_dir))
    together = scorer.score(STORIES, batch_size=3).scores
    assert scorer.score(list(reversed(STORIES)), batch_size=1).scores == pytest.approx(
        together[::-1], abs=1e-5
    )
    for i, story in enumerate(STORIES):
        assert scorer.score([story]).scores == pytest.approx([together[i]], abs=1e-5)


def test_a_folder_that_is_not_a_fluency_reader_is_refused(reader_dir, tmp_path):
    with pytest.raises(NotAFluencyReader, match="does not mark a fluency reader"):
        CoherenceFluencyScorer(json.loads((reader_dir / "fusion.json").read_text())["union_checkpoint"])
    with pytest.raises(NotAFluencyReader, match="is not a fluency reader"):
        CoherenceFluencyScorer(str(tmp_path / "nowhere"))
    with pytest.raises(NotAFluencyReader, match="no fluency reader ships"):
        CoherenceFluencyScorer("default")
    (reader_dir.parent / "no-fusion").mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer_config.json", "vocab.txt"):
        if (reader_dir / name).exists():
            (reader_dir.parent / "no-fusion" / name).write_bytes((reader_dir / name).read_bytes())
    with pytest.raises(ValueError, match="holds no fusion.json"):
        CoherenceFluencyScorer(str(reader_dir.parent / "no-fusion"))
