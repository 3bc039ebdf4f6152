"""Recipe files: a checked-in JSON of a trainer's arguments (``union-*`` train_union's, ``fluency-*``
train_fluency's), with flags after it that override it."""

from __future__ import annotations

import json
import pathlib
import re

import pytest
from transformers import HfArgumentParser

from story_quality.training import run_setup
from story_quality.training.train_fluency import FluencyArguments, FluencyTrainingArguments
from story_quality.training.union_arguments import DataArguments, ModelArguments, UnionTrainingArguments

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "training" / "configs"


def _parse(argv: list[str]):
    return run_setup.parse_arguments(
        HfArgumentParser((ModelArguments, DataArguments, UnionTrainingArguments)), argv
    )


def test_every_recipe_names_its_trainer():
    assert all(path.name.startswith(("union-", "fluency-")) for path in CONFIGS.glob("*.json"))


@pytest.mark.parametrize("recipe", sorted(CONFIGS.glob("fluency-*.json")), ids=lambda p: p.name)
def test_every_fluency_recipe_parses_into_its_trainer_s_arguments(recipe):
    parser = HfArgumentParser((FluencyArguments, FluencyTrainingArguments))
    reader, training = run_setup.parse_arguments(parser, [str(recipe), "--model_name_or_path", "encoder"])
    recorded = json.loads(recipe.read_text(encoding="utf-8"))
    assert (reader.dataset, reader.num_hidden_layers, reader.max_length) == (
        recorded["dataset"],
        recorded["num_hidden_layers"],
        recorded["max_length"],
    )
    assert (training.learning_rate, training.seed) == (recorded["learning_rate"], recorded["seed"])


@pytest.mark.parametrize("recipe", sorted(CONFIGS.glob("union-*.json")), ids=lambda p: p.name)
def test_every_checked_in_recipe_parses_into_the_trainer_s_arguments(recipe):
    model, data, training = _parse([str(recipe)])
    recorded = json.loads(recipe.read_text(encoding="utf-8"))
    assert model.model_name_or_path == recorded["model_name_or_path"]
    assert model.max_length == recorded["max_length"]
    assert data.dataset == recorded["dataset"]
    assert training.learning_rate == recorded["learning_rate"]
    assert training.seed == recorded["seed"]


def test_flags_after_the_recipe_override_it(tmp_path):
    recipe = tmp_path / "recipe.json"
    recipe.write_text(
        json.dumps({"dataset": "a", "output_dir": "run", "seed": 1, "max_length": 128, "report_to": ["none"]})
    )
    model, data, training = _parse([str(recipe), "--seed", "43", "--dataset", "b"])
    assert (training.seed, data.dataset, model.max_length, training.output_dir) == (43, "b", 128, "run")


@pytest.mark.parametrize("content", ["[1, 2]", "{not json"])
def test_a_recipe_that_is_not_an_object_of_arguments_is_refused_naming_it(tmp_path, content):
    recipe = tmp_path / "bad.json"
    recipe.write_text(content)
    with pytest.raises(ValueError, match="bad.json"):
        _parse([str(recipe)])


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("recipe.json", '{"seed": 1, "learning_rate": 0.1, "seed": 2}'),
        ("recipe.yaml", "seed: 1\nlearning_rate: 0.1\nseed: 2\n"),
    ],
)
def test_a_key_given_twice_is_refused_naming_the_key_and_the_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"recipe file {re.escape(str(path))}: .*'seed' given twice"):
        run_setup.config_flags(str(path))
