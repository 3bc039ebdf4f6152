"""Licences a user can rely on: the package's MIT LICENSE, in the wheel, and every card consistent
with it and with its base model, naming the terms of its training data."""

from __future__ import annotations

import configparser
import re

import pytest
import yaml
from conftest import REPO

from story_quality.training.model_cards import CARD_TEMPLATES

ROC, WP, COLA = (
    "ROCStories (Mostafazadeh et al., 2016)",
    "WritingPrompts (Fan et al., 2018)",
    "CoLA (Warstadt",
)
# Base models of what the project ships or trains, with their licences on the Hub.
BASE_LICENCES = {"sentence-transformers/all-MiniLM-L6-v2": "apache-2.0"}


def front_matter(path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(re.match(r"---\n(.*?)\n---\n", text, re.S).group(1))


def test_the_license_file_is_the_mit_licence_setup_cfg_declares_and_ships():
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    assert setup["metadata"]["license"] == "MIT"
    assert setup["metadata"]["license_files"].split() == ["LICENSE"]  # into the wheel's .dist-info
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_metric_cards_are_mit_and_name_the_data_terms(metric):
    card = REPO / "metrics" / metric / "README.md"
    assert front_matter(card)["license"] == "mit"
    licence = card.read_text().split("## Licence\n", 1)[1].split("\n## ", 1)[0]
    assert "MIT" in licence and "Apache-2.0" in licence
    for terms in (ROC, WP) if metric == "union" else (COLA,):
        assert terms in licence, terms


def test_the_shipped_default_has_its_base_models_licence_and_names_its_data():
    card = REPO / "metrics" / "union" / "default_checkpoint" / "README.md"
    meta = front_matter(card)
    assert meta["license"] == BASE_LICENCES[meta["base_model"]]
    text = card.read_text()
    assert "## Licence and training data" in text and ROC in text and WP in text


@pytest.mark.parametrize(("name", "terms"), [("union-roc", ROC), ("union-wp", WP), ("gruen-cola", COLA)])
def test_hub_card_templates_name_their_licence_and_data_terms(name, terms):
    template = CARD_TEMPLATES[name]
    assert template.license == "apache-2.0"  # BERT-base, the base model of the recipes
    licence = template.path.read_text().split("## Licence\n", 1)[1].split("\n## ", 1)[0]
    assert terms in licence and "MIT" in licence
