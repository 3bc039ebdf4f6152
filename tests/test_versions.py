"""Too-old dependencies fail at import with the package, its version and the command that fixes it."""

from __future__ import annotations

import importlib.metadata

import pytest

from story_quality import versions


def test_an_old_transformers_is_named_with_the_fix(monkeypatch):
    real = importlib.metadata.version
    monkeypatch.setattr(
        versions.importlib.metadata, "version", lambda name: "5.5.4" if name == "transformers" else real(name)
    )
    with pytest.raises(
        ImportError,
        match=r"transformers 5\.5\.4 \(needs >= 5\.6\.0\).*pip install -U \"transformers>=5\.6\.0\"",
    ):
        versions.check_min_versions("transformers", "torch")


def test_the_installed_versions_meet_every_floor():
    versions.check_min_versions()


def test_setup_cfg_declares_the_floors_the_check_enforces():
    from conftest import REPO

    declared = (REPO / "setup.cfg").read_text()
    for name, floor in versions.MINIMUM_VERSIONS.items():
        major_minor = ".".join(floor.split(".")[:2])
        assert f"{name}>={major_minor}" in declared, name
