"""``story-quality publish-metric``: exactly an evaluate Space, pinned to this release, pushed as a
gradio Space to a local server that answers the Hub endpoints an upload uses."""

from __future__ import annotations

import configparser
import json
import re

import evaluate
import pytest
import yaml
from conftest import REPO
from evaluate.loading import get_imports
from fake_hub import FakeHub, committed_files, serve

import story_quality
from story_quality import cli
from story_quality.cli import publish_metric
from story_quality.cli.publish_metric import push_space, stage_space

SPACE = "me/union-space"
PIN = f"story-quality-metrics=={story_quality.__version__}"


def front_matter(text: str) -> dict:
    return yaml.safe_load(re.match(r"---\n(.*?)\n---\n", text, re.S).group(1))


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_the_staged_folder_is_exactly_an_evaluate_space(tmp_path, metric):
    folder = stage_space(metric, f"me/{metric}", tmp_path / "space")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["README.md", "app.py", "requirements.txt", f"{metric}.py"]
    )
    assert (folder / f"{metric}.py").read_text() == (REPO / "metrics" / metric / f"{metric}.py").read_text()
    card = (folder / "README.md").read_text()
    meta = front_matter(card)
    assert (
        meta["sdk"] == "gradio"
        and meta["app_file"] == "app.py"
        and {"evaluate", "metric"} <= set(meta["tags"])
    )
    assert f'evaluate.load("me/{metric}")' in card and "story-quality-metrics/" not in card
    assert 'evaluate.load("me/' + metric + '")' in (folder / "app.py").read_text()
    assert PIN in (folder / "requirements.txt").read_text().splitlines()


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_the_metric_folders_pin_this_release_and_show_the_hub_form(metric):
    folder = REPO / "metrics" / metric
    assert PIN in (folder / "requirements.txt").read_text().splitlines()
    assert f'evaluate.load("story-quality-metrics/{metric}")' in (folder / "README.md").read_text()
    assert f'evaluate.load("story-quality-metrics/{metric}")' in (folder / "app.py").read_text()
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    assert setup["metadata"]["version"] == "attr: story_quality.__version__"  # one source for both


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_every_package_import_of_a_script_names_the_distribution_to_install(metric):
    script = REPO / "metrics" / metric / f"{metric}.py"
    ours = [entry for entry in get_imports(str(script)) if entry[1] == "story_quality"]
    assert ours and all(
        entry == ("library", "story_quality", "story-quality-metrics", None) for entry in ours
    )


def test_the_staged_union_space_scores_without_the_checkpoint_folder(tmp_path):
    folder = stage_space("union", SPACE, tmp_path / "union-space")  # evaluate reads union-space.py
    assert (folder / "union-space.py").is_file()
    result = evaluate.load(str(folder)).compute(predictions=["Ken went to the store. He bought milk."])
    assert result["signature"].startswith("union|") and "checkpoint:default" in result["signature"]


def publish(argv: list[str]) -> int:
    """``story-quality publish-metric ...`` as the command runs it (its refusals through the one handler)."""
    return cli.main(argv)


def test_the_command_is_registered_with_story_quality():
    assert cli.COMMANDS["publish-metric"] is publish_metric
    assert "publish-metric" in cli.parsers()[0].format_help()


def test_bad_ids_and_used_folders_are_refused_by_the_command(tmp_path, capsys):
    assert publish(["publish-metric", "union", "--repo-id", "no-org", "--output", str(tmp_path / "a")]) == 2
    assert "--repo-id must be ORG/NAME" in capsys.readouterr().err
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    assert publish(["publish-metric", "gruen", "--repo-id", "me/g", "--output", str(tmp_path / "used")]) == 2
    assert "is not an empty folder" in capsys.readouterr().err


@pytest.fixture
def hub(monkeypatch):
    yield from serve(monkeypatch, "spaces", SPACE, "c0ffee" * 6 + "c0ff")


def test_push_creates_a_gradio_space_and_commits_exactly_the_staged_files(hub, tmp_path):
    folder = stage_space("union", SPACE, tmp_path / "space")
    url = push_space(folder, SPACE, token="hf_local_test_token")
    assert url.endswith(f"/spaces/{SPACE}/commit/{'c0ffee' * 6}c0ff")
    create = json.loads(FakeHub.requests[0][2])
    assert create["type"] == "space" and create["sdk"] == "gradio" and create["name"] == "union-space"
    commits = [body for path, _, body in FakeHub.requests if path == f"/api/spaces/{SPACE}/commit/main"]
    assert len(commits) == 1
    assert committed_files(commits[0]) == {p.name: p.read_bytes() for p in folder.iterdir()}
