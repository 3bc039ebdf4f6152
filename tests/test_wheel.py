"""The installed project, as a user gets it: build the wheel, install it into a fresh virtual
environment, and use it from an empty directory with no source tree on the path.

The fresh environment borrows this one's dependencies (torch, transformers, ...) through a
``.pth`` line, so nothing is downloaded; the project itself comes only from the wheel. This
catches package data left out of the wheel (lexicon tables, card templates, the shipped UNION
checkpoint) and imports that only work in a clone.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import sysconfig
import textwrap
import venv

import pytest
from tiny_models import save_union_checkpoint

from story_quality.cli import publish_metric
from story_quality.union.checkpoints import SHIPPED_DEFAULT_MANIFEST_SHA256

REPO = pathlib.Path(__file__).resolve().parents[1]

# Runs inside the fresh environment, from an empty directory.
USER_SCRIPT = textwrap.dedent(
    """
    import importlib.util, json, pathlib, subprocess, sys

    import evaluate
    import story_quality
    from story_quality import metric_path

    site = pathlib.Path(sys.argv[1]).resolve()
    assert pathlib.Path(story_quality.__file__).resolve().is_relative_to(site), story_quality.__file__
    for bare in ("metrics", "training", "hub_cards"):
        assert importlib.util.find_spec(bare) is None, f"the wheel installed a top-level {bare!r}"

    gruen = evaluate.load(metric_path("gruen"))
    # The shipped default when this version ships one, else a local folder the test built.
    union = evaluate.load(metric_path("union"), *([] if sys.argv[2] == "shipped" else [sys.argv[2]]))
    report = {"gruen": gruen.name, "union": union.name}
    report["scores"] = union.compute(
        predictions=["[MALE] went to the store . he bought milk . he went home .", "the the the ."]
    )["scores"]

    from story_quality.training.model_cards import render_model_card
    card = render_model_card(
        "union-roc", model_name="m", base_model=None, repo_id="me/m", base_model_text="x",
        id2label={0: "perturbed", 1: "human"}, normalization={}, max_length=200,
        training_data=[], recipe=[], citation="",
    )
    report["card"] = len(str(card))

    stories = pathlib.Path("stories.txt")
    stories.write_text("\\n".join(
        f"{n} went to the park . {n} saw a dog . the dog ran fast . {n} threw a ball . they played all day ."
        for n in ("Ken", "Mary", "Tom", "Sue")
    ))
    subprocess.run(
        [sys.executable, "-m", "story_quality.training.build_union_data", str(stories), "--output-dir",
         "corpus", "--tagger", "heuristic", "--wordnet", "none"],
        check=True, capture_output=True, text=True,
    )
    import datasets
    report["rows"] = len(datasets.load_from_disk("corpus"))
    print(json.dumps(report))
    """
)


def build_wheel(out: pathlib.Path) -> pathlib.Path:
    """This clone's wheel, built as ``publish-metric`` builds the one its Spaces install."""
    out.mkdir(parents=True, exist_ok=True)
    return publish_metric.build_wheel(REPO, out)


@pytest.mark.slow
def test_the_wheel_works_from_an_empty_directory(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    env_dir = tmp_path / "fresh-env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = pathlib.Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # This environment's dependencies, appended after the fresh site-packages. A directory named
    # in a .pth file is not scanned for .pth files, so the editable install stays invisible.
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "NLTK_DATA": str(tmp_path / "nltk"),
    }
    if SHIPPED_DEFAULT_MANIFEST_SHA256:
        checkpoint = "shipped"
    else:
        checkpoint = str(tmp_path / "union-checkpoint")
        save_union_checkpoint(pathlib.Path(checkpoint))
    result = subprocess.run(
        [str(python), "-c", USER_SCRIPT, str(site), checkpoint],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    report = __import__("json").loads(result.stdout.strip().splitlines()[-1])
    assert report["gruen"] == "gruen" and report["union"] == "union"
    assert report["card"] > 500
    assert report["rows"] == 8  # 4 stories, each with its corrupted copy
    assert len(report["scores"]) == 2 and all(0.0 <= s <= 1.0 for s in report["scores"])
