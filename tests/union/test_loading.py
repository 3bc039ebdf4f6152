"""The `union` metric reads the class *named* "human", whatever its index; unnamed classes mean UNION's 1.

UNION's own checkpoints have ``{0: perturbed, 1: human}``; a checkpoint trained elsewhere may
order its classes the other way, or leave them unnamed (``LABEL_0``/``LABEL_1``). All the
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
        ({0: "Human", 1: "corrupted"}, 0),  # the name is matched case-insensitively
        ({0: "LABEL_0", 1: "LABEL_1"}, 1),  # unnamed: UNION's class 1 (documented fallback)
        ({0: "fake", 1: "real"}, 1),  # no class named human: class 1 again
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
