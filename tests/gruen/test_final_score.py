"""GRUEN's final score, every term included, against the paper's formula computed slowly.

The expectation is built here from the tiny models' plain forward passes, one sentence (or one
split point) at a time, and GRUEN's constants written as literals (the GRUEN paper and its release):

* grammaticality = max(0, (exp(-0.5 * lm) + cola) / 8 + 0.5), lm and cola averaged over sentences;
* redundancy = -0.1 per flag (hand-counted below);
* focus = -0.1 if the Word Mover Similarity of any adjacent pair is below 0.05, else 0;
* coherence = minus the mean sentence-order loss over the split points;
* final = min(1, max(0, grammaticality + redundancy + focus [+ coherence])).

The tiny models of ``gruen_models`` keep each term well away from 0 and from saturation
(checked first), so a wrong constant, a term left out or a per-sentence mix-up moves the final
score by far more than the 1e-5 tolerance.
"""

from __future__ import annotations

import math
import string

import evaluate
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import REPO
from gruen_models import save_all, wmd_by_linear_programming
from transformers import (
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    AutoModelForSequenceClassification,
    AutoTokenizer,
)

from story_quality.gruen import focus
from story_quality.gruen.sentences import text_to_sentences

# text -> (its sentences, redundancy flags counted by hand). Every sentence here has at most four
# words, so no pair raises a flag unless one sentence equals or contains the other (4 flags).
TEXTS = {
    "The dog went home. The dog ate.": (["The dog went home.", "The dog ate."], 0),
    "We played at school. Then we went home. The dog was happy.": (
        ["We played at school.", "Then we went home.", "The dog was happy."],
        0,
    ),
    "He lost his car. He found his car.": (["He lost his car.", "He found his car."], 0),
    "She liked her new house.": (["She liked her new house."], 0),
    # "I went home." three times: 3 identical pairs, 4 flags each; against "We ate.": both
    # under 5 words, 0 flags.
    "I went home. I went home. I went home. We ate.": (["I went home."] * 3 + ["We ate."], 12),
}
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return save_all(tmp_path_factory.mktemp("gruen-final-models"))


@pytest.fixture(scope="module")
def metric():
    evaluate.logging.disable_progress_bar()
    yield evaluate.load(str(REPO / "metrics" / "gruen"))
    evaluate.logging.enable_progress_bar()


def _content_tokens(tokenizer, sentence: str) -> list[int]:
    """The sentence's word pieces that carry topic: no special tokens, no pure punctuation."""
    pieces = tokenizer.tokenize(sentence)
    kept = [p for p in pieces if not all(c in string.punctuation for c in p.removeprefix("##"))]
    return tokenizer.convert_tokens_to_ids(kept)


@pytest.fixture(scope="module")
def slow_terms(paths):
    """Per text: mean lm, mean cola, the adjacent similarities and the coherence, one pass at a time."""
    lm_tok = AutoTokenizer.from_pretrained(paths["lm_model"])
    lm = AutoModelForMaskedLM.from_pretrained(paths["lm_model"]).eval()
    cola_tok = AutoTokenizer.from_pretrained(paths["cola_model"])
    cola = AutoModelForSequenceClassification.from_pretrained(paths["cola_model"]).eval()
    sop_tok = AutoTokenizer.from_pretrained(paths["sop_model"])
    sop = AutoModelForPreTraining.from_pretrained(paths["sop_model"]).eval()
    embeddings = lm.get_input_embeddings().weight.detach()
    terms = {}
    with torch.no_grad():
        for text, (sentences, _) in TEXTS.items():
            lm_values, cola_values = [], []
            for sentence in sentences:
                ids = lm_tok(sentence, return_tensors="pt")["input_ids"]  # [CLS] ... [SEP], unmasked
                lm_values.append(math.exp(lm(input_ids=ids, labels=ids).loss.item()))
                cola_values.append(cola(**cola_tok(sentence, return_tensors="pt")).logits[0, 1].item())
            similarities = [
                math.exp(
                    -wmd_by_linear_programming(
                        _content_tokens(lm_tok, a), _content_tokens(lm_tok, b), embeddings
                    )
                    / focus.FOCUS_DISTANCE_SCALE  # the calibrated scale (not a paper constant)
                )
                for a, b in zip(sentences, sentences[1:], strict=False)
            ]
            losses = [
                F.cross_entropy(
                    sop(
                        **sop_tok(" ".join(sentences[:k]), " ".join(sentences[k:]), return_tensors="pt")
                    ).sop_logits,
                    torch.tensor([0]),  # 0 = the original order
                ).item()
                for k in range(1, len(sentences))
            ]
            terms[text] = {
                "lm": float(np.mean(lm_values)),
                "cola": float(np.mean(cola_values)),
                "cola_per_sentence": cola_values,
                "similarities": similarities,
                "coherence": -float(np.mean(losses)) if losses else 0.0,
            }
    return terms


def paper_terms(slow, flags):
    grammaticality = max(0.0, (math.exp(-0.5 * slow["lm"]) + slow["cola"]) / 8 + 0.5)
    redundancy = -0.1 * flags
    focus_term = -0.1 if any(s < 0.05 for s in slow["similarities"]) else 0.0
    return grammaticality, redundancy, focus_term


def test_the_texts_split_as_listed():
    for text, (sentences, _) in TEXTS.items():
        assert text_to_sentences(text) == sentences


def test_every_term_of_the_tiny_models_is_large_enough_to_matter(slow_terms):
    for text, slow in slow_terms.items():
        # the LM term is neither 0 nor 1, and halving its rate (-0.25) would move it a lot
        assert 0.05 < math.exp(-0.5 * slow["lm"]) < 0.5, (text, slow["lm"])
        assert math.exp(-0.25 * slow["lm"]) - math.exp(-0.5 * slow["lm"]) > 0.1
        if len(TEXTS[text][0]) > 1:
            assert slow["coherence"] < -0.05, text  # coherence moves the score ...
            assert slow["coherence"] > -0.5, text  # ... without clipping everything to 0
            assert all(abs(s - 0.05) > 1e-4 for s in slow["similarities"]), text  # no tie at the threshold
    cola = [c for slow in slow_terms.values() for c in slow["cola_per_sentence"]]
    assert max(cola) - min(cola) > 1.0  # per-sentence CoLA values differ: an order mix-up shows
    focused = [any(s < 0.05 for s in slow["similarities"]) for slow in slow_terms.values()]
    assert any(focused) and not all(focused)  # the focus penalty applies to some texts only


@pytest.mark.parametrize("coherence", [True, False])
def test_final_score_equals_the_papers_formula_computed_slowly(metric, paths, slow_terms, coherence):
    result = metric.compute(predictions=list(TEXTS), coherence=coherence, batch_size=3, **paths)
    unclipped = 0
    for i, (text, (_, flags)) in enumerate(TEXTS.items()):
        slow = slow_terms[text]
        grammaticality, redundancy, focus_term = paper_terms(slow, flags)
        coherence_term = slow["coherence"] if coherence else 0.0
        raw = grammaticality + redundancy + focus_term + coherence_term
        assert result["grammaticality"][i] == pytest.approx(grammaticality, abs=TOLERANCE), text
        assert result["redundancy"][i] == pytest.approx(redundancy, abs=1e-12), text
        assert result["focus"][i] == focus_term, text
        if coherence:
            assert result["coherence"][i] == pytest.approx(slow["coherence"], abs=TOLERANCE), text
        else:
            assert result["coherence"][i] is None
        assert result["gruen"][i] == pytest.approx(min(1.0, max(0.0, raw)), abs=TOLERANCE), text
        unclipped += 0.05 < raw < 0.95
    assert unclipped >= 3  # most scores are not clipped: every term shows in them
    assert result["mean_gruen"] == pytest.approx(float(np.mean(result["gruen"])), abs=1e-12)


def test_repeated_sentences_and_the_clip_at_zero(metric, paths, slow_terms):
    text = "I went home. I went home. I went home. We ate."
    result = metric.compute(predictions=[text], coherence=True, **paths)
    grammaticality, redundancy, focus_term = paper_terms(slow_terms[text], 12)
    assert redundancy == pytest.approx(-1.2) and result["redundancy"] == [pytest.approx(-1.2)]
    assert grammaticality + redundancy + focus_term + slow_terms[text]["coherence"] < -0.5
    assert result["gruen"] == [0.0]


def _two_tokens_at_cosine_distance(distance: float) -> torch.Tensor:
    angle = math.acos(1.0 - distance)
    return torch.tensor([[1.0, 0.0], [math.cos(angle), math.sin(angle)]], dtype=torch.float64)


@pytest.mark.parametrize(
    ("similarity", "penalty"), [(0.0499, -0.1), (0.0501, 0.0), (0.5, 0.0), (0.001, -0.1)]
)
def test_focus_penalty_is_minus_a_tenth_below_a_similarity_of_five_hundredths(similarity, penalty):
    # one-token sentences: the Word Mover Distance is the cosine distance of the two tokens
    distance = -focus.FOCUS_DISTANCE_SCALE * math.log(similarity)
    embeddings = _two_tokens_at_cosine_distance(distance)
    assert focus.word_mover_similarity([0], [1], embeddings) == pytest.approx(similarity, rel=1e-9)
    assert focus.focus_score([[0], [0], [1]], embeddings) == penalty
    assert focus.focus_score([[0], [0]], embeddings) == 0.0
