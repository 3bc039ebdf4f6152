"""Rendered model cards parse offline, their metadata round-trips, and the push fails clearly offline."""

from __future__ import annotations

import pytest
import yaml
from huggingface_hub import EvalResult, ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from story_quality.training.hub_push import PushError, push_checkpoint
from story_quality.training.model_cards import (
    CARD_TEMPLATES,
    HUB_CARDS_DIR,
    render_model_card,
    table_rows,
    write_model_card,
)


def results(values: dict[str, float]) -> list[EvalResult]:
    return [
        EvalResult(
            task_type="text-classification",
            dataset_type="some-org/some-data",
            dataset_name="Some data (held out)",
            dataset_split="validation",
            metric_type=metric,
            metric_name=metric.capitalize(),
            metric_value=value,
        )
        for metric, value in values.items()
    ]


@pytest.mark.parametrize("template", sorted(CARD_TEMPLATES))
def test_every_template_renders_to_a_card_whose_metadata_round_trips(template, tmp_path):
    measured = {"accuracy": 0.8125, "pearson": 0.123456789}
    card = render_model_card(
        template,
        model_name="my-checkpoint",
        base_model="google-bert/bert-base-uncased",
        datasets=["some-org/some-data"],
        eval_results=results(measured),
        repo_id="me/my-checkpoint",
        base_model_text="google-bert/bert-base-uncased",
        id2label={0: "a", 1: "b"},
        normalization={"lowercase": True},
        max_length=200,
        training_data=table_rows({"training examples": 1234}),
        recipe=table_rows({"learning rate": 5e-05, "seed": 42}),
        citation="@misc{key, title={T}}",
    )
    path = write_model_card(card, tmp_path)
    assert path.name == "README.md"
    loaded = ModelCard.load(path)  # offline: a local file
    assert loaded.data.to_dict() == card.data.to_dict()
    assert {r.metric_type: r.metric_value for r in loaded.data.eval_results} == measured
    assert loaded.data.license == CARD_TEMPLATES[template].license
    assert loaded.data.base_model == "google-bert/bert-base-uncased"
    assert loaded.data.metrics == ["accuracy", "pearson"]
    # the model-index is valid: the Hub's own parser reads it back to the same results
    header = yaml.safe_load(path.read_text().split("---")[1])
    name, parsed = model_index_to_eval_results(header["model-index"])
    assert name == "my-checkpoint" and [r.metric_value for r in parsed] == list(measured.values())
    text = loaded.text
    assert "| Accuracy | 0.8125 |" in text and "| Pearson | 0.1235 |" in text
    assert "- training examples: 1234" in text and "| learning rate | 5e-05 |" in text
    assert "me/my-checkpoint" in text and "@misc{key, title={T}}" in text and "(`my-checkpoint`)" in text
    assert "{{" not in text and "{%" not in text
    for section in (
        "## Intended use",
        "## Limitations",
        "## Citation",
        "## Training recipe",
        "## Training data",
    ):
        assert section in text


def test_templates_exist_for_every_published_kind():
    assert sorted(p.name for p in HUB_CARDS_DIR.glob("*.md")) == sorted(
        t.file for t in CARD_TEMPLATES.values()
    )


def test_a_card_without_results_says_so_and_has_no_model_index(tmp_path):
    card = render_model_card(
        "union-wp", model_name="x", base_model=None, repo_id="me/x", base_model_text="local",
        id2label={}, normalization={}, max_length=200,
        training_data=[], recipe=[], citation="",
    )  # fmt: skip
    assert "This run recorded no evaluation." in card.text
    assert (
        "model-index" not in card.content
        and ModelCard.load(write_model_card(card, tmp_path)).data.eval_results is None
    )


def test_unknown_template_is_named():
    with pytest.raises(ValueError, match=r"Unknown card template 'union-xx'"):
        render_model_card("union-xx", model_name="x", base_model=None)


def test_push_without_network_is_one_clear_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(PushError) as error:
        push_checkpoint(tmp_path, "me/some-model", token="hf_not_a_real_token")
    message = str(error.value)
    assert "Could not push" in message and "me/some-model" in message
    assert f"saved locally in {str(tmp_path)!r}" in message and "hf upload me/some-model" in message
    assert error.value.__cause__ is None and error.value.__suppress_context__
