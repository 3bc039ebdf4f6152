"""UNION's joint loss against a hand computation, its weighting, and the exported classifier."""

from __future__ import annotations

import math

import pytest
import tiny_models
import torch
from safetensors import safe_open
from transformers import BertForSequenceClassification, BertTokenizer

from story_quality.training.union_model import (
    IGNORE_INDEX,
    BertForUnionTraining,
    UnionDataCollator,
    add_placeholder_tokens,
    encode_union_examples,
    export_classifier,
    load_union_model,
)
from story_quality.union.normalization import CONFIG_KEY, ROC_STORIES

EXAMPLES = {
    "text": [
        "the dog went home . he was happy .",
        "the dog went home . the dog went home . she ate .",
        "we go to school . the cat ran .",
    ],
    "original": [
        "the dog went home . he was happy .",
        "the dog went home . he was happy and sad .",
        "we go to school . the cat ran .",
    ],
    "context": ["the dog went home .", "the dog went home .", "we go to school ."],
    "label": [1, 0, 1],
}


@pytest.fixture(scope="module")
def tokenizer() -> BertTokenizer:
    return tiny_models.tokenizer(lowercase=True, model_max_length=64)


def make_model(tokenizer, weight: float, seed: int = 0) -> BertForUnionTraining:
    torch.manual_seed(seed)
    config = tiny_models.bert_config(len(tokenizer), num_labels=2)
    model = BertForUnionTraining(config, reconstruction_weight=weight)
    return model.eval()


def batch_of(tokenizer, max_length: int = 64) -> dict[str, torch.Tensor]:
    encoded = encode_union_examples(EXAMPLES, tokenizer, max_length)
    features = [{k: encoded[k][i] for k in encoded} for i in range(len(EXAMPLES["text"]))]
    return UnionDataCollator(tokenizer)(features)


def hand_loss(model: BertForUnionTraining, batch: dict[str, torch.Tensor], weight: float) -> float:
    """Example by example, position by position: the loss as the paper defines it."""
    with torch.no_grad():
        states = model.bert(
            batch["input_ids"], attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"]
        )
        pooled, hidden = states.pooler_output, states.last_hidden_state
        embeddings = model.bert.embeddings.word_embeddings.weight
        cls_terms, recon_terms = [], []
        for i in range(len(batch["labels"])):
            logits = pooled[i] @ model.classifier.weight.T + model.classifier.bias
            cls_terms.append(-torch.log_softmax(logits, -1)[batch["labels"][i]].item())
            for j, target in enumerate(batch["reconstruction_labels"][i].tolist()):
                if target == IGNORE_INDEX:
                    continue
                transformed = model.cls.predictions.transform(hidden[i, j])
                token_logits = transformed @ embeddings.T + model.cls.predictions.bias
                recon_terms.append(-torch.log_softmax(token_logits, -1)[target].item())
    return sum(cls_terms) / len(cls_terms) + weight * sum(recon_terms) / len(recon_terms)


def test_joint_loss_equals_hand_computation(tokenizer):
    model = make_model(tokenizer, weight=0.1)
    batch = batch_of(tokenizer)
    with torch.no_grad():
        output = model(**batch)
    assert output.loss.item() == pytest.approx(hand_loss(model, batch, 0.1), abs=1e-5)
    assert output.loss.item() == pytest.approx(
        output.classification_loss.item() + 0.1 * output.reconstruction_loss.item(), abs=1e-6
    )


def test_lambda_zero_is_classification_only_and_leaves_the_head_untrained(tokenizer):
    batch = batch_of(tokenizer)
    model = make_model(tokenizer, weight=0.0)
    output = model(**batch)
    assert output.reconstruction_loss is None
    assert output.loss.item() == pytest.approx(hand_loss(model, batch, 0.0), abs=1e-5)
    output.loss.backward()
    assert model.cls.predictions.transform.dense.weight.grad is None
    # the same weights with lambda 0.5 give a different, larger loss (the reconstruction term is positive)
    weighted = make_model(tokenizer, weight=0.5)
    assert weighted(**batch).loss.item() > output.loss.item() + 0.1


def test_reconstruction_targets_skip_cls_context_and_padding(tokenizer):
    batch = batch_of(tokenizer)
    originals = tokenizer(EXAMPLES["original"], truncation=True, max_length=64)["input_ids"]
    for i, context in enumerate(EXAMPLES["context"]):
        context_length = len(tokenizer(context, add_special_tokens=False)["input_ids"])
        length = int(batch["attention_mask"][i].sum())
        targets = batch["reconstruction_labels"][i].tolist()
        assert targets[: 1 + context_length] == [IGNORE_INDEX] * (1 + context_length)
        expected = (originals[i][:length] + [IGNORE_INDEX] * length)[:length]
        assert targets[1 + context_length : length] == expected[1 + context_length :]
        assert targets[length:] == [IGNORE_INDEX] * (len(targets) - length)
    # the corrupted example is longer than its original: past the original's end nothing is predicted
    corrupted = batch["reconstruction_labels"][1].tolist()
    assert len(originals[1]) < int(batch["attention_mask"][1].sum())
    assert set(corrupted[len(originals[1]) :]) == {IGNORE_INDEX}
    assert corrupted[len(originals[1]) - 1] == tokenizer.sep_token_id


def test_mlm_head_is_tied_to_word_embeddings_after_resize(tokenizer, tmp_path):
    plain = BertTokenizer(vocab=tiny_models.vocabulary(True), do_lower_case=True)
    assert plain.tokenize("[MALE]") != ["[MALE]"]
    assert add_placeholder_tokens(plain) == ["[MALE]", "[FEMALE]", "[NEUTRAL]"]
    assert [plain.tokenize(t) for t in ("[MALE]", "[FEMALE]", "[NEUTRAL]")] == [
        ["[MALE]"],
        ["[FEMALE]"],
        ["[NEUTRAL]"],
    ]
    assert add_placeholder_tokens(plain) == []
    model = make_model(BertTokenizer(vocab=tiny_models.vocabulary(True)), weight=0.1)
    model.resize_token_embeddings(len(plain))
    decoder = model.get_output_embeddings()
    assert decoder.weight.data_ptr() == model.bert.embeddings.word_embeddings.weight.data_ptr()
    assert decoder.weight.shape[0] == model.cls.predictions.bias.shape[0] == len(plain)


def test_export_is_a_plain_classifier_with_the_same_scores(tokenizer, tmp_path):
    model = make_model(tokenizer, weight=0.1, seed=3)
    batch = batch_of(tokenizer)
    classifier = export_classifier(model, ROC_STORIES)
    assert type(classifier) is BertForSequenceClassification
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        assert torch.allclose(classifier(**inputs).logits, model(**inputs).logits, atol=1e-6)
    classifier.save_pretrained(tmp_path)
    with safe_open(tmp_path / "model.safetensors", "pt") as saved:
        keys = list(saved.keys())
    assert keys and not [k for k in keys if k.startswith("cls.")]
    reloaded = BertForSequenceClassification.from_pretrained(tmp_path)
    assert getattr(reloaded.config, CONFIG_KEY) == ROC_STORIES.to_dict()
    assert reloaded.config.id2label == {0: "perturbed", 1: "human"}
    assert not math.isnan(reloaded(**inputs).logits.sum().item())


def test_a_checkpoint_stored_in_fp16_trains_in_fp32(tmp_path):
    """The shipped default is fp16 on disk; continuing it must not update fp16 weights."""
    folder = tiny_models.save_union_checkpoint(tmp_path / "fp16", normalization=ROC_STORIES.to_dict())
    BertForSequenceClassification.from_pretrained(folder).half().save_pretrained(folder)
    with safe_open(str(folder / "model.safetensors"), "pt") as stored:
        assert {stored.get_tensor(name).dtype for name in stored.keys()} == {torch.float16}
    model = load_union_model(str(folder), reconstruction_weight=0.0, model_type="bert")
    assert {parameter.dtype for parameter in model.parameters()} == {torch.float32}


def test_a_union_checkpoint_labelled_the_other_way_round_trains_on_with_its_head_in_unions_order(tmp_path):
    """{0: human, 1: perturbed} is a UNION checkpoint that score reads correctly: renaming its classes
    to UNION's order without moving the head would invert the model; its head rows are swapped instead."""
    folder = tiny_models.save_union_checkpoint(tmp_path / "reversed", id2label={0: "human", 1: "perturbed"})
    stored = BertForSequenceClassification.from_pretrained(folder).classifier
    model = load_union_model(str(folder), reconstruction_weight=0.0, model_type="bert")
    assert model.config.id2label == {0: "perturbed", 1: "human"}
    torch.testing.assert_close(model.classifier.weight, stored.weight[[1, 0]])
    torch.testing.assert_close(model.classifier.bias, stored.bias[[1, 0]])
    same = tiny_models.save_union_checkpoint(tmp_path / "union")  # the same weights, UNION's order
    kept = load_union_model(str(same), reconstruction_weight=0.0, model_type="bert")
    torch.testing.assert_close(kept.classifier.weight, stored.weight)


@pytest.mark.parametrize(
    "labels",
    [{0: "unacceptable", 1: "acceptable"}, {0: "LABEL_0", 1: "LABEL_1"}, {0: "negative", 1: "positive"}],
)
def test_a_classifier_of_another_task_is_refused_as_a_start(tmp_path, labels):
    """A CoLA model (or any two-class classifier that is not UNION's) would train on with its own head
    under UNION's names, although score refuses such a model; a base encoder starts a new head."""
    folder = tiny_models.save_union_checkpoint(tmp_path / "cola", id2label=labels)
    with pytest.raises(
        ValueError, match=r"cola is a two-class classifier labelled .*, not a UNION checkpoint"
    ):
        load_union_model(str(folder), reconstruction_weight=0.0, model_type="bert")
    base = tiny_models.save_masked_lm(tmp_path / "base", lowercase=True)
    assert load_union_model(str(base), 0.0, "bert").config.id2label == {0: "perturbed", 1: "human"}
