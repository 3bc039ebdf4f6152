"""The shipped default (the checkpoint inside the project): export, verification at load, the README's first example."""

from __future__ import annotations

import json
import pathlib
import re
import shutil

import evaluate
import pytest
import torch
import transformers
from safetensors import safe_open
from tiny_models import save_union_checkpoint

from story_quality.checkpoints.files import sha256_of
from story_quality.training.shipped_assets.shipped_default import export_shipped_default
from story_quality.union.checkpoints import (
    MANIFEST,
    SHIPPED_DEFAULT_MANIFEST_SHA256,
    CheckpointError,
    read_manifest,
    shipped_default_dir,
    verify_checkpoint,
)
from story_quality.union.normalization import ROC_STORIES

REPO = pathlib.Path(__file__).resolve().parents[2]
METRIC = str(REPO / "metrics" / "union")
STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",
    "the dog ran . the cat ate . it rained .",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path, str]:
    root = tmp_path_factory.mktemp("shipped-default")
    source = save_union_checkpoint(root / "run", normalization=ROC_STORIES.to_dict(), max_length=48)
    (source / "README.md").write_text(
        '# card\n\nevaluate.load(metric_path("union"), "org/union")\nfrom_pretrained("org/union")\n\n'
        "## Results of this training run\n\nnone\n"
    )
    digest = export_shipped_default(
        source, root / "shipped", note="## How it was made\n\nby a test", hub_id="org/union"
    )
    return source, root / "shipped", digest


def test_export_writes_fp16_a_manifest_and_the_note(exported):
    source, shipped, digest = exported
    assert digest == sha256_of(shipped / MANIFEST)
    with safe_open(str(shipped / "model.safetensors"), "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    listed = read_manifest(shipped)
    assert set(listed) == {p.name for p in shipped.iterdir()} - {MANIFEST}
    card = (shipped / "README.md").read_text()
    assert card.index("## How it was made") < card.index("## Results of this training run")
    assert (
        'evaluate.load(metric_path("union"))\n' in card
        and 'from_pretrained("metrics/union/default_checkpoint")' in card
    )
    assert "org/union" not in card
    verify_checkpoint(shipped, digest)


def test_exported_scores_match_the_fp32_run_to_fp16_precision(exported):
    source, shipped, _ = exported
    evaluate.logging.disable_progress_bar()
    full = evaluate.load(METRIC, str(source)).compute(predictions=STORIES)["scores"]
    half = evaluate.load(METRIC, str(shipped)).compute(predictions=STORIES)["scores"]
    assert half == pytest.approx(full, abs=2e-3)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(shipped, dtype=torch.float32)
    assert next(model.parameters()).dtype == torch.float32


def test_export_records_the_reading_of_long_stories_and_spares_a_foreign_folder(exported, tmp_path):
    source = exported[0]
    export_shipped_default(source, tmp_path / "windows", long_stories="windows")
    config = json.loads((tmp_path / "windows" / "config.json").read_text())
    assert config["union_long_stories"] == "windows"
    assert "union_long_stories" not in json.loads((exported[1] / "config.json").read_text())
    export_shipped_default(source, tmp_path / "windows", long_stories="head")  # an earlier export is replaced
    assert json.loads((tmp_path / "windows" / "config.json").read_text())["union_long_stories"] == "head"
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "chapter1.tex").write_text("months of work")
    with pytest.raises(FileExistsError, match="chapter1.tex"):
        export_shipped_default(source, foreign)
    assert (foreign / "chapter1.tex").read_text() == "months of work"
    with pytest.raises(ValueError, match="long_stories must be one of"):
        export_shipped_default(source, tmp_path / "other", long_stories="tail")


@pytest.mark.parametrize("damage", ["flip a byte", "delete", "edit the manifest"])
def test_a_damaged_checkpoint_is_named(exported, tmp_path, damage):
    _, shipped, digest = exported
    copy = shutil.copytree(shipped, tmp_path / "copy")
    weights = copy / "model.safetensors"
    if damage == "flip a byte":
        data = bytearray(weights.read_bytes())
        data[len(data) // 2] ^= 0xFF
        weights.write_bytes(bytes(data))
        expected = "model.safetensors is damaged"
    elif damage == "delete":
        weights.unlink()
        expected = "model.safetensors is missing"
    else:
        (copy / MANIFEST).write_text((copy / MANIFEST).read_text() + "0" * 64 + "  extra.bin\n")
        expected = f"{MANIFEST} is damaged"
    with pytest.raises(CheckpointError, match=re.escape(expected)):
        verify_checkpoint(copy, digest)


def readme_first_example() -> str:
    readme = (REPO / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", readme, re.S).group(1)


def test_the_shipped_checkpoint_is_intact_small_and_records_its_normalisation():
    folder = shipped_default_dir()
    verify_checkpoint(folder, SHIPPED_DEFAULT_MANIFEST_SHA256)
    assert sum(p.stat().st_size for p in folder.iterdir()) <= 48 * 10**6
    config = transformers.AutoConfig.from_pretrained(folder)
    assert config.union_normalization == ROC_STORIES.to_dict()
    assert {int(k): v for k, v in config.id2label.items()} == {0: "perturbed", 1: "human"}
    card = (folder / "README.md").read_text()
    assert "model-index" in card and "Pearson" in card


def test_readme_first_example_runs_offline_with_the_shipped_default(monkeypatch):
    """Verbatim, from the clone's root, as a new user runs it; the shipped folder stays untouched."""
    folder = shipped_default_dir()
    before = {p.name: sha256_of(p) for p in folder.iterdir()}
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    exec(compile(readme_first_example(), "README.md", "exec"), namespace)
    scores = namespace["result"]["scores"]
    assert len(scores) == 2 and scores[0] > 0.5 > scores[1]  # the coherent story, then the repetitive one
    assert namespace["result"]["union_score"] == pytest.approx(sum(scores) / 2)
    assert {p.name: sha256_of(p) for p in folder.iterdir()} == before


def test_default_resolves_to_the_verified_shipped_folder(exported, monkeypatch):
    from story_quality.union import checkpoints

    _, shipped, digest = exported
    monkeypatch.setattr(checkpoints, "SHIPPED_DEFAULT_MANIFEST_SHA256", digest)
    monkeypatch.setattr(checkpoints, "shipped_default_dir", lambda: shipped)
    assert checkpoints.resolve_checkpoint("default").source == str(shipped)
    monkeypatch.setattr(checkpoints, "SHIPPED_DEFAULT_MANIFEST_SHA256", "0" * 64)
    with pytest.raises(CheckpointError, match="SHA256SUMS is damaged"):
        checkpoints.resolve_checkpoint("default")


def test_the_shipped_card_names_the_base_model_and_data_and_no_machine_path():
    card = (shipped_default_dir() / "README.md").read_text()
    assert "base_model: sentence-transformers/all-MiniLM-L6-v2" in card
    assert "70fab7fe7764703192b6da25d84d845a9d4551e12a06a618bb61360195cdeef4" in card  # corrupted copies
    assert "37f5fd217dc50e47ecc5e283dd84bdce061e09da28364ffebc27bd745ed4ef35" in card  # a quarter generated
    for machine_path in ("/work/", "/tmp/", "/home/", "/root/", "site-packages", ".venv", "outputs/"):
        assert machine_path not in card, machine_path
