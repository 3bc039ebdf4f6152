"""A damaged checkpoint folder is named, with the missing or bad file, by both metrics."""

from __future__ import annotations

import pathlib
import shutil

import evaluate
import pytest
import torch
from safetensors.torch import load_file
from tiny_models import save_union_checkpoint

from story_quality import metric_path
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.gruen.loading import load_model

REPO = pathlib.Path(__file__).resolve().parents[2]


def remove_tokenizer(folder: pathlib.Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)


def truncate_weights(folder: pathlib.Path) -> None:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


def garble_header(folder: pathlib.Path) -> None:
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[8:16] = b"\xff" * 8
    weights.write_bytes(bytes(data))


def pickle_only(folder: pathlib.Path) -> None:
    state = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")


DAMAGE = {
    "config.json is missing": lambda f: (f / "config.json").unlink(),
    "the tokenizer is missing": remove_tokenizer,
    "model.safetensors is missing": lambda f: (f / "model.safetensors").unlink(),
    "model.safetensors is truncated or damaged": truncate_weights,
    "model.safetensors is damaged (its header is not safetensors JSON)": garble_header,
    "it holds only PyTorch pickle weights (*.bin)": pickle_only,
}


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> pathlib.Path:
    return save_union_checkpoint(tmp_path_factory.mktemp("whole") / "checkpoint")


def damaged_copy(whole: pathlib.Path, tmp_path: pathlib.Path, problem: str) -> pathlib.Path:
    folder = tmp_path / "damaged"
    shutil.copytree(whole, folder)
    DAMAGE[problem](folder)
    return folder


@pytest.mark.parametrize("problem", sorted(DAMAGE))
def test_union_names_the_folder_and_the_bad_file(whole, tmp_path, problem):
    folder = damaged_copy(whole, tmp_path, problem)
    with pytest.raises(OSError) as error:
        evaluate.load(metric_path("union"), str(folder))
    message = str(error.value)
    assert type(error.value).__name__ == "CheckpointError"
    assert f"from the local folder {folder}: {problem}" in message
    assert "config.json, a tokenizer (tokenizer.json or vocab.txt) and model.safetensors" in message


@pytest.mark.parametrize("problem", sorted(DAMAGE))
def test_gruen_names_the_model_the_folder_and_the_bad_file(whole, tmp_path, problem):
    folder = damaged_copy(whole, tmp_path, problem)
    with pytest.raises(OSError, match=rf"CoLA classifier \(cola_model\) from the local folder {folder}: "):
        load_model("cola", CheckpointReference.parse(str(folder)), torch.device("cpu"))
    with pytest.raises(OSError) as error:
        load_model("cola", CheckpointReference.parse(str(folder)), torch.device("cpu"))
    assert problem in str(error.value)


def test_a_whole_folder_loads(whole):
    assert (
        load_model("cola", CheckpointReference.parse(str(whole)), torch.device("cpu")).model.config.num_labels
        == 2
    )
    assert evaluate.load(metric_path("union"), str(whole)).compute(predictions=["a b . c d ."])["scores"]
