"""The export of a run as the shipped default: nothing lost, nothing non-finite, the wrong folder refused."""

from __future__ import annotations

import pathlib

import pytest
from safetensors.torch import load_file, save_file
from tiny_models import save_union_checkpoint

from story_quality.training.shipped_assets import shipped_default
from story_quality.training.shipped_assets.shipped_default import export_shipped_default, main
from story_quality.union.checkpoints import MANIFEST
from story_quality.union.normalization import ROC_STORIES


def contents(folder: pathlib.Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def run(tmp_path) -> pathlib.Path:
    source = save_union_checkpoint(tmp_path / "run", normalization=ROC_STORIES.to_dict(), max_length=48)
    (source / "README.md").write_text("# the run's card\n")
    return source


@pytest.fixture
def earlier_export(run, tmp_path) -> pathlib.Path:
    export_shipped_default(run, tmp_path / "export")
    return tmp_path / "export"


def set_weight(folder: pathlib.Path, value: float, key: str = "classifier.weight") -> str:
    weights = load_file(str(folder / "model.safetensors"))
    weights[key][0, 0] = value
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return key


def test_a_run_over_the_size_limit_leaves_the_old_export_whole(run, earlier_export, monkeypatch):
    """Case 3: the limit is checked before anything is removed (the fp16 weights, then the files)."""
    before = contents(earlier_export)
    monkeypatch.setattr(shipped_default, "SIZE_LIMIT_BYTES", 1000)
    with pytest.raises(ValueError, match=r"over the 0 MB limit.*nothing was written"):
        export_shipped_default(run, earlier_export)
    assert contents(earlier_export) == before
    weights = sum(t.numel() for t in load_file(str(run / "model.safetensors")).values()) * 2
    monkeypatch.setattr(shipped_default, "SIZE_LIMIT_BYTES", weights + 10)  # files (tokenizer) tip it over
    with pytest.raises(ValueError, match=r"over the .* limit; nothing was changed"):
        export_shipped_default(run, earlier_export)
    assert contents(earlier_export) == before
    assert sorted(p.name for p in earlier_export.parent.iterdir()) == ["export", "run"]  # no scratch left


@pytest.mark.parametrize("where", ["the source", "inside the source", "a folder holding the source"])
def test_the_source_is_never_the_target(run, where):
    """Case 4: ``src --target src`` once replaced the fp32 weights by fp16 and emptied the card."""
    before = contents(run)
    target = {
        "the source": run,
        "inside the source": run / "export",
        "a folder holding the source": run.parent,
    }[where]
    with pytest.raises(
        FileExistsError, match=r"--target .*(is the input|holds the input|lies inside the source)"
    ):
        export_shipped_default(run, target)
    assert contents(run) == before


def test_another_models_folder_is_never_written_into(run, tmp_path):
    """Another run's folder holds only files an export writes, but no manifest: not an export."""
    other = save_union_checkpoint(tmp_path / "other", normalization=ROC_STORIES.to_dict(), seed=3)
    for name in ("special_tokens_map.json", "vocab.txt"):  # keep only names an export writes
        (other / name).unlink(missing_ok=True)
    before = contents(other)
    with pytest.raises(FileExistsError, match=rf"was not written by an export \(it has no {MANIFEST}\)"):
        export_shipped_default(run, other)
    assert contents(other) == before


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e6])
def test_non_finite_weights_are_refused_naming_the_tensor(run, earlier_export, value):
    """Case 14: NaN or infinite weights (or one past fp16's range, infinite once halved) are not shipped."""
    key = set_weight(run, value)
    before = contents(earlier_export)
    with pytest.raises(ValueError, match=rf"tensor {key} holds NaN or infinite weights"):
        export_shipped_default(run, earlier_export)
    assert contents(earlier_export) == before


def test_a_missing_source_is_a_usage_error_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as error:
        main(["nothere", "--target", str(tmp_path / "export")])
    assert error.value.code == 2
    assert "nothere: no such folder" in capsys.readouterr().err
    assert not (tmp_path / "export").exists()


def test_help_names_the_default_target_without_this_machine_s_path(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    printed = capsys.readouterr().out
    assert "metrics/union/default_checkpoint" in printed
    assert str(shipped_default.DEFAULT_TARGET.parents[2]) not in printed
