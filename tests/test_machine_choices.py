"""Choices kept on disk for later processes: read back by key, other keys kept, never half written."""

from __future__ import annotations

import json

import pytest

from story_quality import machine_choices
from story_quality.machine_choices import cache_folder, cpu_name, keep_choice, kept_choice


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_choices.CACHE_VARIABLE, str(tmp_path / "kept"))
    return tmp_path / "kept"


def test_a_kept_choice_is_read_back_by_its_key_beside_the_others(folder):
    assert kept_choice("library", "cpu A") is None
    keep_choice("library", "cpu A", "onednn")
    keep_choice("library", "cpu B", "torch")
    keep_choice("other", "cpu A", "x")
    keep_choice("library", "cpu A", "torch")  # measured again: replaced
    assert (kept_choice("library", "cpu A"), kept_choice("library", "cpu B")) == ("torch", "torch")
    assert kept_choice("library", "cpu C") is None and kept_choice("other", "cpu A") == "x"
    assert json.loads((folder / "library.json").read_text()) == {"cpu A": "torch", "cpu B": "torch"}
    assert sorted(p.name for p in folder.iterdir()) == ["library.json", "other.json"]  # no file left aside


def test_the_folder_follows_the_variables(tmp_path, monkeypatch):
    monkeypatch.delenv(machine_choices.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "story_quality"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder() == tmp_path / "home" / ".cache" / "story_quality"
    monkeypatch.setenv(machine_choices.CACHE_VARIABLE, str(tmp_path / "mine"))
    assert cache_folder() == tmp_path / "mine"


def test_a_failed_write_leaves_the_kept_file_whole(folder, monkeypatch):
    keep_choice("library", "cpu A", "onednn")

    def failing(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(machine_choices.json, "dump", failing)
    keep_choice("library", "cpu B", "torch")  # ignored
    assert json.loads((folder / "library.json").read_text()) == {"cpu A": "onednn"}
    assert [p.name for p in folder.iterdir()] == ["library.json"]


def test_the_cpu_is_named():
    assert cpu_name().strip()
