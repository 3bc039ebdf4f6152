"""The `union` metric reads the class *named* "human", whatever its index; any other labels are refused.

UNION's own checkpoints have ``{0: perturbed, 1: human}``; a checkpoint trained elsewhere may
order its classes the other way. One whose labels are not perturbed and human (a CoLA-style
acceptability model, transformers' unnamed ``LABEL_0``/``LABEL_1``) is refused by name. All the
checkpoints below share their weights (same seed), so the expected score is the softmax of
one fixed class of one plain forward pass, and picking the other class would give 1 minus it.
"""

from __future__ import annotations

import evaluate
import pytest
import torch
import transformers
from conftest import REPO
from tiny_models import save_union_checkpoint

METRIC = str(REPO / "metrics" / "union")
WINDOW = 48
STORIES = [
    "ken went to the store . he bought milk . he went home happy .",
    "the dog ran to the school . the cat ate .",
    "i played with my friends after school . we ran and ran . then we ate .",
    "the old man walked his dog every day . one day the dog found a cat .",
]


def class_probabilities(checkpoint, texts: list[str]) -> torch.Tensor:
    """Softmax over both classes, one text at a time (texts already in the model's form)."""
    tok = transformers.AutoTokenizer.from_pretrained(checkpoint)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(checkpoint).eval()
    with torch.no_grad():
        return torch.cat(
            [
                torch.softmax(model(**tok(t, return_tensors="pt", truncation=True)).logits, dim=-1)
                for t in texts
            ]
        )


@pytest.fixture(scope="module")
def probabilities(tmp_path_factory):
    reference = save_union_checkpoint(tmp_path_factory.mktemp("labels") / "union", max_length=WINDOW)
    probs = class_probabilities(reference, STORIES)
    # the two classes must be told apart, or a wrong index could not show
    assert (probs[:, 1] - probs[:, 0]).abs().min() > 0.05
    return probs


def scores_with_labels(tmp_path, id2label) -> list[float]:
    checkpoint = save_union_checkpoint(tmp_path / "ckpt", max_length=WINDOW, id2label=id2label)
    config = transformers.AutoConfig.from_pretrained(checkpoint)
    assert config.id2label == id2label  # the checkpoint carries exactly this label map
    metric = evaluate.load(METRIC, str(checkpoint))
    return metric.compute(predictions=STORIES)["scores"]


@pytest.mark.parametrize(
    ("id2label", "human_class"),
    [
        ({0: "perturbed", 1: "human"}, 1),  # UNION's own order
        ({0: "human", 1: "perturbed"}, 0),  # swapped: the name wins over the index
        ({0: "Human", 1: "PERTURBED"}, 0),  # the names are matched case-insensitively
    ],
)
def test_score_is_the_probability_of_the_class_named_human(tmp_path, probabilities, id2label, human_class):
    scores = scores_with_labels(tmp_path, id2label)
    assert scores == pytest.approx(probabilities[:, human_class].tolist(), abs=1e-5)


def test_swapping_the_label_names_turns_every_score_into_one_minus_it(tmp_path, probabilities):
    usual = scores_with_labels(tmp_path / "usual", {0: "perturbed", 1: "human"})
    swapped = scores_with_labels(tmp_path / "swapped", {0: "human", 1: "perturbed"})
    assert [a + b for a, b in zip(usual, swapped, strict=True)] == pytest.approx(
        [1.0] * len(STORIES), abs=1e-5
    )
    assert all(abs(a - b) > 0.05 for a, b in zip(usual, swapped, strict=True))


HINT = 'The shipped default loads offline: evaluate.load(story_quality.metric_path("union"), "default").'
UNION_FORM = "A UNION checkpoint is a two-class classifier labelled {0: 'perturbed', 1: 'human'}"


@pytest.mark.parametrize(
    ("id2label", "why"),
    [
        (
            {0: "unacceptable", 1: "acceptable"},
            "it is an acceptability (CoLA-style) classifier, such as GRUEN's grammaticality model: its "
            "P(acceptable) is not a union score (the gruen metric reads such a model).",
        ),
        (
            {0: "LABEL_0", 1: "LABEL_1"},
            "these are transformers' unnamed labels, so which class means a human story cannot be told. If the "
            "model was trained as UNION is, with class 1 for human stories, name them and save the config: "
            'config.id2label = {0: "perturbed", 1: "human"}; config.label2id = {"perturbed": 0, "human": 1}; '
            "config.save_pretrained(FOLDER).",
        ),
        (
            {0: "fake", 1: "human"},
            "its classes are not named perturbed and human, so which probability would be a union score cannot "
            "be told.",
        ),
        (
            {0: "human", 1: "human"},
            "its classes are not named perturbed and human, so which probability would be a union score cannot "
            "be told.",
        ),
    ],
)
def test_a_classifier_whose_labels_are_not_perturbed_and_human_is_refused_by_name(tmp_path, id2label, why):
    checkpoint = save_union_checkpoint(tmp_path / "ckpt", max_length=WINDOW, id2label=id2label)
    with pytest.raises(OSError) as refused:
        evaluate.load(METRIC, str(checkpoint)).compute(predictions=STORIES)
    labels = {i: label for i, label in sorted(id2label.items())}
    assert str(refused.value) == (
        f"Cannot use {checkpoint} as a UNION checkpoint: its 2 labels are {labels}; {why} {UNION_FORM} "
        f"(what training/train_union.py writes). {HINT}"
    )


def test_the_shipped_default_and_what_training_writes_follow_the_rule():
    """The shipped default's labels, and training's, are the ones the rule reads."""
    import json

    from story_quality.training.union_model import ID2LABEL
    from story_quality.union import loading

    config = json.loads((REPO / "metrics" / "union" / "default_checkpoint" / "config.json").read_text())
    assert {int(i): label for i, label in config["id2label"].items()} == dict(enumerate(loading.UNION_LABELS))
    assert dict(ID2LABEL) == dict(enumerate(loading.UNION_LABELS))
