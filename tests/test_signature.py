"""Every result carries a signature that pins what made it: checkpoint, normalisation, window, version."""

from __future__ import annotations

import pathlib
import shutil
import threading

import evaluate
import pytest
import torch
from gruen_models import save_all
from safetensors.torch import load_file, save_file
from tiny_models import save_union_checkpoint

from story_quality.checkpoints.files import checkpoint_sha256
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.signature import Signature, SignatureError
from story_quality.union.normalization import NAMES_SHA256, ROC_STORIES
from story_quality.versions import package_version

REPO = pathlib.Path(__file__).resolve().parents[1]
STORY = "Ken went to the store. He bought milk. He went home happy."


def load_union(folder: pathlib.Path):
    return evaluate.load(str(REPO / "metrics" / "union"), str(folder))


def test_union_signature_names_weights_normalisation_window_and_version(tmp_path):
    folder = save_union_checkpoint(tmp_path / "run", normalization=ROC_STORIES.to_dict(), max_length=48)
    result = load_union(folder).compute(predictions=[STORY])
    sha = checkpoint_sha256(folder)
    assert result["signature"] == (
        f"union|v{package_version()}|checkpoint:run@sha256:{sha[:12]}"
        f"|norm:lowercase+replace_names+roc_tokenize+plain_typography+lowercase_names+names_sha256:{NAMES_SHA256[:12]}"
        "|window:48|long:head|fp32"
    )
    assert "window:20|" in load_union(folder).compute(predictions=[STORY], max_length=20)["signature"]
    assert (
        "|long:windows|"
        in load_union(folder).compute(predictions=[STORY], long_stories="windows")["signature"]
    )


def test_the_same_weights_give_the_same_signature_and_other_weights_another(tmp_path):
    first = save_union_checkpoint(tmp_path / "a", normalization=ROC_STORIES.to_dict(), max_length=48)
    copy = tmp_path / "copy_of_a"
    shutil.copytree(first, copy)
    same = load_union(copy).compute(predictions=[STORY])["signature"]
    assert same.replace("copy_of_a@", "a@") == load_union(first).compute(predictions=[STORY])["signature"]
    weights = load_file(copy / "model.safetensors")
    weights["classifier.bias"] = weights["classifier.bias"] + torch.tensor([0.0, 1e-3])
    save_file(weights, copy / "model.safetensors", metadata={"format": "pt"})
    changed = load_union(copy).compute(predictions=[STORY])["signature"]
    assert changed != same and changed.split("|")[2] != same.split("|")[2]


def test_files_beside_the_weights_that_change_scores_change_the_signature(tmp_path):
    """Issue 47: another vocabulary or config beside the same weights scores otherwise; a README does not."""
    folder = save_union_checkpoint(tmp_path / "run", normalization=ROC_STORIES.to_dict(), max_length=48)
    before = CheckpointReference.parse(str(folder)).label()
    (folder / "README.md").write_text("notes")
    assert CheckpointReference.parse(str(folder)).label() == before
    for name in ("config.json", *(path.name for path in folder.glob("tokenizer*")), "vocab.txt"):
        path = folder / name
        if not path.is_file():
            continue
        original = path.read_bytes()
        path.write_bytes(
            original.replace(b"}", b', "x": 1}', 1) if name.endswith(".json") else original + b"zz\n"
        )
        assert CheckpointReference.parse(str(folder)).label() != before, name
        path.write_bytes(original)
    assert CheckpointReference.parse(str(folder)).label() == before


def test_an_empty_call_carries_the_signature_too(tmp_path):
    folder = save_union_checkpoint(tmp_path / "run", normalization=ROC_STORIES.to_dict(), max_length=48)
    assert load_union(folder).compute(predictions=[])["signature"].startswith("union|v")


def test_gruen_signature_names_each_model_and_mode(tmp_path):
    paths = save_all(tmp_path)
    gruen = evaluate.load(str(REPO / "metrics" / "gruen"))
    plain = gruen.compute(predictions=["The dog ran home."], **paths)["signature"]
    parts = plain.split("|")
    assert parts[0] == "gruen" and parts[1] == f"v{package_version()}"
    assert parts[2] == f"lm:lm@sha256:{checkpoint_sha256(paths['lm_model'])[:12]}"
    assert parts[3] == f"cola:cola@sha256:{checkpoint_sha256(paths['cola_model'])[:12]}"
    assert parts[4:] == ["lm_scoring:reference", "coherence:off", "fp32"]
    with_sop = gruen.compute(predictions=["The dog ran home."], coherence=True, lm_scoring="pll", **paths)
    assert (
        "|sop:sop@sha256:" in with_sop["signature"] and "lm_scoring:pll|coherence:on" in with_sop["signature"]
    )


def test_gruen_hashes_its_models_for_the_signature_while_it_scores(tmp_path, monkeypatch):
    """Every model file the signature names is read on one hashing thread, none on the caller's: a
    thread per model would take both cores of a small machine from the caller's loading."""
    from story_quality.checkpoints import files

    paths = save_all(tmp_path)
    monkeypatch.setattr(files, "_HASHES", {})
    read_on: dict[str, set[str]] = {}
    threads: set[int] = set()
    real = files.sha256_of

    def recording(path):
        read_on.setdefault(pathlib.Path(path).parent.name, set()).add(threading.current_thread().name)
        threads.add(threading.get_ident())
        return real(path)

    monkeypatch.setattr(files, "sha256_of", recording)
    gruen = evaluate.load(str(REPO / "metrics" / "gruen"))
    gruen.compute(predictions=["The dog ran home."], coherence=True, **paths)
    assert read_on == {"lm": {"sha256-ahead"}, "cola": {"sha256-ahead"}, "sop": {"sha256-ahead"}}
    assert len(threads) == 1


def test_a_signature_parses_back_to_itself_and_names_its_parts():
    text = (
        "union|v0.4.0|checkpoint:default@sha256:0123456789ab|norm:none|window:256|long:windows|bf16-autocast"
    )
    parsed = Signature.parse(text)
    assert str(parsed) == text and parsed == Signature("union", "0.4.0", tuple(text.split("|")[2:]))
    assert (parsed.metric, parsed["checkpoint"], parsed.get("window"), parsed.get("rescale")) == (
        "union",
        "default@sha256:0123456789ab",
        "256",
        None,
    )
    assert parsed.scoring_parts() == ("union", "checkpoint:default@sha256:0123456789ab", "norm:none", "window:256",
                                "long:windows")  # fmt: skip
    for arithmetic in ("fp32", "fp32-onednn"):  # the arithmetic is not how a text is read
        assert (
            Signature.parse(text.replace("bf16-autocast", arithmetic)).scoring_parts()
            == parsed.scoring_parts()
        )
    rescaled = parsed.with_part("human-roc:sha256:ab")
    assert rescaled.without("human-roc") == parsed and str(rescaled).endswith("|human-roc:sha256:ab")
    assert str(Signature.of("gruen", "lm:x@main")) == f"gruen|v{package_version()}|lm:x@main"


@pytest.mark.parametrize("text", ["", "union", "union|0.4.0|fp32", "|v1|fp32", 5])
def test_what_is_not_a_signature_is_refused(text):
    with pytest.raises(SignatureError):
        Signature.parse(text)
    with pytest.raises(SignatureError, match="has no 'window' part"):
        Signature.parse("union|v1|fp32")["window"]
