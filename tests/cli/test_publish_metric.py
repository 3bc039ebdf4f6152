"""``story-quality publish-metric``: exactly an evaluate Space, pinned to this release, pushed as a
gradio Space to a local server that answers the Hub endpoints an upload uses."""

from __future__ import annotations

import configparser
import importlib.metadata
import json
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import venv

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
from story_quality.cli.space_page import SPACE_GRADIO

SPACE = "me/union-space"
PIN = f"story-quality-metrics=={story_quality.__version__}"
# A pinned source needs no wheel build: the fast tests stage with it, the slow one builds the wheel.
GIT_SOURCE = "git+https://example.org/story-quality.git@0123abc"


def front_matter(text: str) -> dict:
    return yaml.safe_load(re.match(r"---\n(.*?)\n---\n", text, re.S).group(1))


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_the_staged_folder_is_exactly_an_evaluate_space(tmp_path, metric):
    folder = stage_space(metric, f"me/{metric}", tmp_path / "space", GIT_SOURCE)
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
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert f"story-quality-metrics @ {GIT_SOURCE}" in requirements
    # a CPU Space gets torch's CPU build, not PyPI's multi-GB CUDA one
    torch_version = importlib.metadata.version("torch").split("+")[0]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
    assert f"torch=={torch_version}+cpu" in requirements


@pytest.mark.parametrize("metric", ["union", "gruen"])
def test_the_metric_folders_hold_what_publish_metric_stages_by_default(metric):
    """A folder copied by hand holds the Space's own files: the CPU torch, this release's wheel (named,
    so that pip says which file is missing), the page's app.py and the gradio it was tried with."""
    folder = REPO / "metrics" / metric
    requirements = (folder / "requirements.txt").read_text()
    assert requirements == publish_metric.requirements_text(f"./{publish_metric.default_wheel_name()}")
    assert (
        f"./story_quality_metrics-{story_quality.__version__}-py3-none-any.whl" in requirements.splitlines()
    )
    assert (folder / "app.py").read_text() == publish_metric.APP.format(
        repo_id=f"story-quality-metrics/{metric}"
    )
    assert front_matter((folder / "README.md").read_text())["sdk_version"] == SPACE_GRADIO
    assert f'evaluate.load("story-quality-metrics/{metric}")' in (folder / "README.md").read_text()
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
    folder = stage_space(
        "union", SPACE, tmp_path / "union-space", GIT_SOURCE
    )  # evaluate reads union-space.py
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


@pytest.mark.parametrize("repo_id", ['me/x"y', "me/x--y", "me/x.git", "me/-x", "me/x y"])
def test_ids_the_hub_refuses_are_refused_before_anything_is_staged(tmp_path, capsys, repo_id):
    space = tmp_path / "space"
    assert publish(["publish-metric", "union", "--repo-id", repo_id, "--output", str(space)]) == 2
    err = capsys.readouterr().err
    assert f"--repo-id {repo_id!r} is not an id the Hub accepts" in err and len(err.strip().splitlines()) == 1
    assert not space.exists()


@pytest.fixture
def hub(monkeypatch):
    yield from serve(monkeypatch, "spaces", SPACE, "c0ffee" * 6 + "c0ff")


def test_push_creates_a_gradio_space_and_commits_exactly_the_staged_files(hub, tmp_path):
    folder = stage_space("union", SPACE, tmp_path / "space", GIT_SOURCE)
    url = push_space(folder, SPACE, token="hf_local_test_token")
    assert url.endswith(f"/spaces/{SPACE}/commit/{'c0ffee' * 6}c0ff")
    create = json.loads(FakeHub.requests[0][2])
    assert create["type"] == "space" and create["sdk"] == "gradio" and create["name"] == "union-space"
    commits = [body for path, _, body in FakeHub.requests if path == f"/api/spaces/{SPACE}/commit/main"]
    assert len(commits) == 1
    assert committed_files(commits[0]) == {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_release_no_index_has_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    index = tmp_path / "index"  # an index pip can read that holds no story-quality-metrics
    index.mkdir()
    monkeypatch.setenv("PIP_INDEX_URL", index.as_uri())
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    argv = ["publish-metric", "union", "--repo-id", "me/u", "--output", str(tmp_path / "space")]
    assert publish([*argv, "--package-source", PIN, "--push"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"story-quality publish-metric: error: --package-source {PIN}: no package index pip is set up with has it, so the "
        "Space could not install it; name a wheel file, a source folder, git+https://HOST/REPO@COMMIT_OR_TAG "
        "instead (default: this clone's wheel).\n"
    )
    assert not (tmp_path / "space" / "requirements.txt").exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("git+https://example.org/story-quality.git", "not pinned; end it with @COMMIT or @TAG"),
        ("story-quality-metrics>=0.5", "no such file or folder, and not a wheel file"),
        ("./no-such-folder", "no such file or folder, and not a wheel file"),
    ],
)
def test_sources_a_space_could_not_build_from_are_refused(tmp_path, capsys, source, message):
    argv = ["publish-metric", "gruen", "--repo-id", "me/g", "--output", str(tmp_path / "space")]
    assert publish([*argv, "--package-source", source]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"story-quality publish-metric: error: --package-source {source}: {message}")
        and err.count("\n") == 1
    )


def test_a_wheel_file_is_copied_into_the_space_and_named(tmp_path):
    wheel = tmp_path / "story_quality_metrics-9.9-py3-none-any.whl"
    wheel.write_bytes(b"a wheel")
    folder = stage_space("gruen", "me/g", tmp_path / "space", str(wheel))
    assert (folder / wheel.name).read_bytes() == b"a wheel"
    assert f"./{wheel.name}" in (folder / "requirements.txt").read_text().splitlines()


# Runs app.py inside the fresh environment: evaluate.load of the Space's id reads the staged folder (no
# network), and the gradio page (gradio is not installed here) is replaced by one that records the module.
RUN_APP = """
import json, pathlib, runpy, sys
import evaluate, evaluate.utils
import story_quality

space, repo_id = pathlib.Path(sys.argv[1]), sys.argv[2]
load = evaluate.load
evaluate.load = lambda path, *args, **kwargs: load(str(space) if path == repo_id else path, *args, **kwargs)
launched = []
import story_quality.cli.space_page as page
page.launch_page = launched.append
runpy.run_path(str(space / "app.py"), run_name="__main__")
(module,) = launched
scores = module.compute(predictions=["Ken went to the store. He bought milk. He went home."])["scores"]
print(json.dumps({"package": story_quality.__file__, "name": module.name, "scores": scores}))
"""


@pytest.mark.slow
def test_the_staged_requirements_install_offline_from_the_space_folder_alone(tmp_path):
    space = stage_space("union", SPACE, tmp_path / "union-space")  # this clone's wheel, built in
    (requirement,) = [
        line
        for line in (space / "requirements.txt").read_text().splitlines()
        if not line.startswith(("#", "--", "torch=="))  # torch comes from this environment below
    ]
    assert re.fullmatch(
        rf"\./story_quality_metrics-{re.escape(story_quality.__version__)}-py3-none-any\.whl", requirement
    )
    env_dir = tmp_path / "fresh-env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = pathlib.Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    # The dependencies come from this environment (a directory named in a .pth file is not scanned for
    # .pth files, so this clone's editable install stays invisible); the package only from the Space.
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(site)]
    subprocess.run(
        [*install, "-r", "requirements.txt"], cwd=space, check=True, capture_output=True, text=True
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"), "HF_HOME": str(tmp_path / "hf"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # fmt: skip
    ran = subprocess.run(
        [str(python), "-c", RUN_APP, str(space), SPACE], cwd=empty, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert pathlib.Path(report["package"]).resolve().is_relative_to(site.resolve())
    assert report["name"] == "union" and len(report["scores"]) == 1 and 0 <= report["scores"][0] <= 1
