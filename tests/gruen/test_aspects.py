"""Each GRUEN aspect against a slow, obviously-correct computation on tiny random models."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import transformers
from gruen_models import save_all, wmd_by_linear_programming
from transformers import (
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    AutoModelForSequenceClassification,
    AutoTokenizer,
)

from story_quality.bert_forward.classifier import BertClassifierFastPath
from story_quality.bert_forward.packed_layers import BertLayers
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen import focus, sentences
from story_quality.gruen.coherence import coherence_scores, split_pair
from story_quality.gruen.grammaticality import cola_scores, pll_nll_scores, reference_lm_scores
from story_quality.gruen.loading import LoadedModel, load_model
from story_quality.gruen.redundancy import edit_distance, redundancy_flags, redundancy_score

SENTENCES = [
    "The dog went home.",
    "She was very happy and then she ran to the big store with her friend.",
    "Then I ate an apple.",
    "It was 1984 in the small town of Xyzzy, and nobody knew why!",
    "He said no.",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    paths = save_all(tmp_path_factory.mktemp("gruen-models"))
    cpu = torch.device("cpu")
    return {
        role: load_model(role, CheckpointReference.parse(paths[f"{role}_model"]), cpu)
        for role in ("lm", "cola", "sop")
    } | {"paths": paths}


def test_reference_lm_equals_a_batch_size_one_loop(models):
    path = models["paths"]["lm_model"]
    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForMaskedLM.from_pretrained(path).eval()
    slow = []
    with torch.no_grad():
        for sentence in SENTENCES:
            ids = tok(sentence, return_tensors="pt")["input_ids"]
            slow.append(math.exp(model(input_ids=ids, labels=ids).loss.item()))
    for batch_size in (1, 2, 32):
        assert reference_lm_scores(models["lm"], SENTENCES, batch_size) == pytest.approx(slow, rel=1e-5)


def test_batched_pll_equals_one_mask_at_a_time(models):
    path = models["paths"]["lm_model"]
    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForMaskedLM.from_pretrained(path).eval()
    slow = []
    with torch.no_grad():
        for sentence in SENTENCES:
            ids = tok(sentence, return_tensors="pt")["input_ids"][0]
            nll = []
            for position in range(1, len(ids) - 1):  # every token but [CLS] and [SEP]
                masked = ids.clone()
                masked[position] = tok.mask_token_id
                logits = model(input_ids=masked[None]).logits[0, position]
                nll.append(-torch.log_softmax(logits, -1)[ids[position]].item())
            slow.append(sum(nll) / len(nll))
    for batch_size in (1, 5, 64):
        assert pll_nll_scores(models["lm"], SENTENCES, batch_size) == pytest.approx(slow, abs=1e-4)


def test_cola_term_is_the_raw_class_one_logit(models):
    path = models["paths"]["cola_model"]
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.no_grad():
        slow = [model(**tok(s, return_tensors="pt")).logits[0, 1].item() for s in SENTENCES]
    assert cola_scores(models["cola"], SENTENCES, 2) == pytest.approx(slow, abs=1e-5)


# Enough word pieces for one batch to run packed (packed_layers.PACK_MIN_TOKENS).
PACKED_SENTENCES = SENTENCES + SENTENCES[::-1]


@pytest.fixture
def packed_batches(monkeypatch) -> list[int]:
    """The real-token count of every batch the packed BERT layers run."""
    seen: list[int] = []
    packed = BertLayers.packed

    def recording(self, hidden, batch, keep, count):
        seen.append(hidden.shape[0])
        return packed(self, hidden, batch, keep, count)

    monkeypatch.setattr(BertLayers, "packed", recording)
    return seen


def test_bert_models_run_through_the_packed_layers(models, packed_batches):
    """The BERT masked LM and CoLA classifier read their encoders packed, with their own values."""
    assert isinstance(models["lm"].bert_layers, BertLayers)
    assert models["lm"].bert_layers is models["lm"].bert_layers  # built once per loaded model
    assert isinstance(models["cola"].classifier_fast_path, BertClassifierFastPath)
    path = models["paths"]["lm_model"]
    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForMaskedLM.from_pretrained(path).eval()
    with torch.no_grad():
        slow = []
        for sentence in PACKED_SENTENCES:
            ids = tok(sentence, return_tensors="pt")["input_ids"]
            slow.append(math.exp(model(input_ids=ids, labels=ids).loss.item()))
    assert reference_lm_scores(models["lm"], PACKED_SENTENCES, 32) == pytest.approx(slow, rel=1e-5)
    path = models["paths"]["cola_model"]
    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForSequenceClassification.from_pretrained(path)
    with torch.no_grad():
        slow = [model.eval()(**tok(s, return_tensors="pt")).logits[0, 1].item() for s in PACKED_SENTENCES]
    assert cola_scores(models["cola"], PACKED_SENTENCES, 32) == pytest.approx(slow, abs=1e-5)
    assert len(packed_batches) == 2  # one batch of the LM's, one of CoLA's


def test_other_encoders_use_their_own_forward():
    config = transformers.RobertaConfig(
        vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=40, pad_token_id=0,
    )  # fmt: skip
    lm = LoadedModel(tokenizer=None, model=transformers.RobertaForMaskedLM(config).eval(), window=38)
    classifier = transformers.RobertaForSequenceClassification(config).eval()
    assert lm.bert_layers is None
    assert LoadedModel(tokenizer=None, model=classifier, window=38).classifier_fast_path is None


def test_coherence_is_minus_the_mean_sop_loss_over_split_points(models):
    path = models["paths"]["sop_model"]
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForPreTraining.from_pretrained(path).eval()
    texts = [SENTENCES[:3], SENTENCES[3:4], [SENTENCES[i] for i in (2, 4, 0, 2)]]  # all within the window
    slow = []
    with torch.no_grad():
        for text in texts:
            losses = [
                F.cross_entropy(
                    model(**tok(" ".join(text[:k]), " ".join(text[k:]), return_tensors="pt")).sop_logits,
                    torch.tensor([0]),
                ).item()
                for k in range(1, len(text))
            ]
            slow.append(-sum(losses) / len(losses) if losses else 0.0)
    assert coherence_scores(models["sop"], texts, 3) == pytest.approx(slow, abs=1e-5)
    assert slow[1] == 0.0  # one sentence: no order to judge


def test_sop_pairs_longer_than_the_window_keep_the_tokens_next_to_the_split():
    a, b = list(range(100)), list(range(100, 130))
    kept_a, kept_b = split_pair(a, b, 40)
    assert kept_a == list(range(80, 100)) and kept_b == list(range(100, 120))
    kept_a, kept_b = split_pair(a[:5], b, 20)
    assert kept_a == a[:5] and kept_b == b[:15]


def test_word_mover_distance_equals_the_transport_linear_program():
    torch.manual_seed(0)
    embeddings = torch.randn(30, 8)
    pairs = [
        ([1, 2, 3, 3], [3, 4, 5]),
        ([7], [8, 9, 9, 10, 11]),
        ([1, 2], [1, 2]),
        ([4, 5, 6, 7, 8, 9], [9, 20]),
    ]
    for a_ids, b_ids in pairs:
        expected = wmd_by_linear_programming(a_ids, b_ids, embeddings)
        assert focus.word_mover_distance(a_ids, b_ids, embeddings) == pytest.approx(expected, abs=1e-6)


def test_focus_penalises_only_texts_with_an_unrelated_adjacent_pair():
    embeddings = torch.eye(4)  # orthogonal pieces: cosine distance 1 between different ids
    assert focus.word_mover_similarity([0, 1], [0, 1], embeddings) == pytest.approx(1.0)
    assert focus.word_mover_similarity([0], [1], embeddings) == pytest.approx(
        math.exp(-1 / focus.FOCUS_DISTANCE_SCALE)
    )
    assert math.exp(-1 / focus.FOCUS_DISTANCE_SCALE) < 0.05  # the paper's threshold
    assert focus.focus_score([[0, 1], [0, 1], [1, 0]], embeddings) == 0.0
    assert focus.focus_score([[0, 1], [0, 1], [2, 3]], embeddings) == -0.1  # the paper's penalty
    assert focus.focus_score([[0, 1]], embeddings) == 0.0


def test_focus_bags_drop_special_tokens_and_punctuation(models):
    tok = models["lm"].tokenizer
    ids = tok("The dog, went home!")["input_ids"]
    assert tok.convert_ids_to_tokens(focus.content_pieces(ids, tok)) == ["The", "dog", "went", "home"]


@pytest.mark.parametrize(
    ("a", "b", "flags"),
    [
        ("He went home.", "He went home.", 4),  # identical
        ("He went home", "He went home and slept.", 4),  # contained
        ("I like cats.", "I like dogs.", 0),  # both under 5 words: no rule applies
        # char LCS 22 <= 23.2; word run 5 <= 5.6; edit distance 3 < 17.4; common words 6 > 5.6
        ("The cat sat on the mat today.", "The dog sat on the mat today.", 2),
        # char LCS 33 > 30.4; word run 8 > 6.4; edit distance 6 < 25.2; common words 8 > 6.4
        ("Yesterday I went to the store to buy milk.", "Today I went to the store to buy milk.", 4),
        ("The weather was crisp and cool.", "My brother bought a new red car.", 0),
        ("the dog went home.", "The dog went home.", 0),  # case-sensitive: not identical, under 5 words
    ],
)
def test_redundancy_flags_on_hand_checked_pairs(a, b, flags):
    assert redundancy_flags(a, b) == flags


def test_redundancy_score_sums_every_pair():
    text = ["He went home.", "She stayed out late.", "He went home."]
    assert redundancy_score(text) == pytest.approx(-0.4)
    assert redundancy_score(text + ["He went home."]) == pytest.approx(-1.2)  # three identical pairs


def _levenshtein_table(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_bit_parallel_edit_distance_equals_the_dynamic_programming_table():
    rng = np.random.default_rng(0)
    for _ in range(500):
        a = "".join(rng.choice(list("ab c"), rng.integers(0, 90)))
        b = "".join(rng.choice(list("abcdé"), rng.integers(0, 90)))
        assert edit_distance(a, b) == _levenshtein_table(a, b)
    long_a, long_b = "xyz" * 100, "y" + "xzy" * 103  # beyond one 64-bit word
    assert edit_distance(long_a, long_b) == _levenshtein_table(long_a, long_b)


def test_preprocessing_follows_the_release():
    assert sentences.normalize_text("  A b.\n\nC d..E f  g. 3.5 and 10.25 ") == "A b. C d. E f g. UNK and UNK"
    assert sentences.text_to_sentences("Hello. Ok. The dog ran! Yes !") == ["The dog ran!"]
    assert sentences.text_to_sentences("word") == []


def test_missing_punkt_data_is_announced_and_splitting_stays_deterministic(caplog, monkeypatch):
    def no_data(*args, **kwargs):
        raise LookupError("no punkt")

    monkeypatch.setattr(sentences.nltk.data, "find", no_data)
    sentences.sentence_splitter.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            split = sentences.sentence_splitter()
        assert "punkt_tab" in caplog.text and "untrained Punkt" in caplog.text
        assert split("Mr. Smith went home. He slept.") == ["Mr. Smith went home.", "He slept."]
    finally:
        sentences.sentence_splitter.cache_clear()
