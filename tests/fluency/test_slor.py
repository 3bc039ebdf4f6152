"""Reader (b): the Witten-Bell trigram model and SLOR against counts made by hand in a plain loop."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from story_quality.fluency.slor import START, SlorModel, slor_problem

CORPUS = ["the dog ran .", "the cat ran .", "a dog sat .", "the dog sat ."]


def slow_slor(corpus: list[str], sentence: str) -> tuple[float, float, float]:
    """Log P under the interpolated Witten-Bell trigram model, log P under its unigram part, SLOR,
    from n-grams counted one by one."""
    c1, c2, c3 = Counter(), Counter(), Counter()
    for line in corpus:
        words = [START, START, *line.split()]
        for i in range(2, len(words)):
            c1[words[i]] += 1
            c2[(words[i - 1], words[i])] += 1
            c3[(words[i - 2], words[i - 1], words[i])] += 1
    n, types = sum(c1.values()), len(c1)

    def p1(w: str) -> float:
        return (c1[w] + types / (types + 1)) / (n + types)

    def p2(v: str, w: str) -> float:
        total = sum(c for (h, _), c in c2.items() if h == v)
        seen = sum(1 for (h, _) in c2 if h == v)
        return p1(w) if total == 0 else (c2[(v, w)] + seen * p1(w)) / (total + seen)

    def p3(u: str, v: str, w: str) -> float:
        total = sum(c for (a, b, _), c in c3.items() if (a, b) == (u, v))
        seen = sum(1 for (a, b, _) in c3 if (a, b) == (u, v))
        return p2(v, w) if total == 0 else (c3[(u, v, w)] + seen * p2(v, w)) / (total + seen)

    words = [START, START, *sentence.split()]
    model = sum(math.log(p3(words[i - 2], words[i - 1], words[i])) for i in range(2, len(words)))
    unigram = sum(math.log(p1(w)) for w in words[2:])
    return model, unigram, (model - unigram) / (len(words) - 2)


@pytest.fixture(scope="module")
def model() -> SlorModel:
    return SlorModel.count(CORPUS)


SENTENCES = ["the dog ran .", "dog the ran .", "a cat sat .", "the zebra ran .", "the", "ran ran ran ran"]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_slor_matches_the_counts_made_by_hand(model, sentence):
    model_lp, unigram_lp, lengths = model.log_probabilities([sentence])
    expected = slow_slor(CORPUS, sentence)
    assert model_lp[0] == pytest.approx(expected[0], rel=1e-12)
    assert unigram_lp[0] == pytest.approx(expected[1], rel=1e-12)
    assert model.sentence_slor([sentence])[0] == pytest.approx(expected[2], rel=1e-12, abs=1e-12)
    assert lengths[0] == len(sentence.split())


def test_the_hand_countable_figure():
    # "the" after two starts: c(<s> <s> the) = 3 of 4 sentence openings, 2 distinct openings; after
    # one start the same; the unigram: 3 of 16 words, 7 types, V = 8.
    p1 = (3 + 7 / 8) / (16 + 7)
    p2 = (3 + 2 * p1) / (4 + 2)
    p3 = (3 + 2 * p2) / (4 + 2)
    model = SlorModel.count(CORPUS)
    assert model.log_probabilities(["the"])[0][0] == pytest.approx(math.log(p3), rel=1e-12)
    assert model.sentence_slor(["the"])[0] == pytest.approx(math.log(p3) - math.log(p1), rel=1e-12)


@pytest.mark.parametrize(
    "history", [("<s>", "<s>"), ("the", "dog"), ("dog", "ran"), ("cat", "sat"), ("x", "y")]
)
def test_each_distribution_sums_to_one_with_the_unknown_word(model, history):
    # P(w | u v) over every word that can follow (the vocabulary, the unknown word) sums to 1.
    u, v = history
    total = 0.0
    for word in [*model.words[2:], "<never-seen>"]:
        sentence_lp = model.log_probabilities([f"{u} {v} {word}"])[0][0]
        prefix_lp = model.log_probabilities([f"{u} {v}"])[0][0]
        total += math.exp(sentence_lp - prefix_lp)
    assert total == pytest.approx(1.0, rel=1e-12)


def test_a_sentence_scores_the_same_alone_and_in_any_batch(model):
    together = model.sentence_slor(SENTENCES)
    alone = [model.sentence_slor([sentence])[0] for sentence in SENTENCES]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)
    assert model.sentence_slor(["", "the dog ran ."])[0] == 0.0


def test_written_and_read_back_it_scores_the_same(model, tmp_path):
    model.write(tmp_path / "lm", {"built": "toy"})
    again = SlorModel.read(tmp_path / "lm")
    np.testing.assert_array_equal(again.sentence_slor(SENTENCES), model.sentence_slor(SENTENCES))


def test_refusals_name_the_folder(tmp_path):
    assert "lacks slor.json" in slor_problem(tmp_path)
    with pytest.raises(ValueError, match="not a SLOR reader"):
        SlorModel.read(tmp_path)
    (tmp_path / "slor.json").write_text('{"story_quality_reader": "other"}')
    (tmp_path / "slor_counts.npz").write_bytes(b"")
    assert "does not mark" in slor_problem(tmp_path)
    with pytest.raises(ValueError, match="at least one word"):
        SlorModel.count(["", " "])
