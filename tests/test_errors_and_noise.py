"""Errors that name the way out, and fail fast: a dead Hub endpoint, retired names, a misplaced
checkpoint argument, pre-release versions under a floor."""

from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys
import time

import evaluate
import pytest
from conftest import REPO

from story_quality import versions
from story_quality.union.checkpoints import CheckpointError, resolve_checkpoint

LOAD_UNION = (
    "import evaluate, story_quality; evaluate.load(story_quality.metric_path('union'), 'someone/union')"
)
LOAD_COLA = (
    "import torch; from story_quality.gruen.loading import load_model; "
    "from story_quality.checkpoints.reference import CheckpointReference; "
    "load_model('cola', CheckpointReference.parse('someone/cola'), torch.device('cpu'))"
)


def closed_port() -> int:
    """A loopback port nothing listens on: a connection to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(("code", "named"), [(LOAD_UNION, "someone/union"), (LOAD_COLA, "someone/cola")])
def test_a_dead_endpoint_fails_in_seconds_with_the_clear_message(tmp_path, code, named):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    env |= {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HOME": str(tmp_path)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    elapsed = time.monotonic() - started
    assert done.returncode != 0
    assert named in done.stderr and "did not answer within" in done.stderr and "local cache" in done.stderr
    assert "Retrying in" not in done.stderr  # huggingface_hub's backoff never started
    assert elapsed < 30, f"took {elapsed:.0f} s"


@pytest.mark.parametrize("name", ["roc", "wp", "roc@main"])
def test_the_unpublished_names_are_refused_with_the_way_to_build_one(name):
    with pytest.raises(CheckpointError, match=r"was never published.*train_union\.py --normalization"):
        resolve_checkpoint(name)


def test_a_checkpoint_passed_to_compute_is_sent_to_evaluate_load():
    union = evaluate.load(str(REPO / "metrics" / "union"))
    with pytest.raises(TypeError, match=r"evaluate\.load's second argument, config_name"):
        union.compute(predictions=["He ran home."], checkpoint="org/model")


def test_a_release_candidate_does_not_pass_the_final_release_floor(monkeypatch):
    real = importlib.metadata.version
    monkeypatch.setattr(
        versions.importlib.metadata,
        "version",
        lambda name: "5.6.0rc1" if name == "transformers" else real(name),
    )
    with pytest.raises(ImportError, match=r"transformers 5\.6\.0rc1 \(needs >= 5\.6\.0\)"):
        versions.check_min_versions("transformers")
