"""A checkpoint reference is parsed once: a folder is never split at an "@", a Hub id is, and a signature
names each the same way whatever the place that asks."""

from __future__ import annotations

import pathlib

import pytest
from tiny_models import save_union_checkpoint

from story_quality.checkpoints.files import checkpoint_sha256
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.union.checkpoints import CheckpointError, resolve_checkpoint


def test_a_hub_id_splits_at_its_last_at_and_takes_a_given_revision():
    assert CheckpointReference.parse("org/model@v1.0") == CheckpointReference(
        "org/model@v1.0", "org/model", "v1.0", False
    )
    assert CheckpointReference.parse("org/model").revision is None
    assert CheckpointReference.parse("org/model", revision="abc").revision == "abc"
    assert CheckpointReference.parse("org/model@abc", revision="abc").revision == "abc"
    assert str(CheckpointReference.parse("org/model")) == "org/model@main"
    with pytest.raises(ValueError, match="pins revision 'abc' and was also given revision 'def'"):
        CheckpointReference.parse("org/model@abc", revision="def")


def test_a_folder_is_never_split_even_with_an_at_in_its_path(tmp_path):
    folder = save_union_checkpoint(tmp_path / "run@2", max_length=32)
    reference = CheckpointReference.parse(str(folder))
    assert (reference.source, reference.revision, reference.local) == (str(folder), None, True)
    assert reference.label() == f"run@2@sha256:{checkpoint_sha256(folder)[:12]}"
    assert resolve_checkpoint(str(folder)) == reference


def test_a_home_folder_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = save_union_checkpoint(tmp_path / "runs" / "a", max_length=32)
    reference = CheckpointReference.parse("~/runs/a")
    assert reference.local and pathlib.Path(reference.source) == folder
    assert reference.label() == f"~/runs/a@sha256:{checkpoint_sha256(folder)[:12]}"  # as earlier versions


def test_the_shipped_default_is_a_verified_folder_and_takes_no_revision():
    reference = resolve_checkpoint("default")
    assert reference.local and reference.name == "default"
    assert reference.label().startswith("default@sha256:")
    with pytest.raises(CheckpointError, match="takes no revision"):
        resolve_checkpoint("default@abc")
    with pytest.raises(CheckpointError, match="never published"):
        resolve_checkpoint("roc@abc")
