"""A push that succeeds: ``push_checkpoint`` through the real ``huggingface_hub`` client, over real HTTP,
to a local server on 127.0.0.1 that answers the few Hub endpoints an upload uses."""

from __future__ import annotations

import json
import pathlib

import pytest
from fake_hub import FakeHub, committed_files, serve

from story_quality.training import hub_push, train_union
from story_quality.training.hub_push import push_checkpoint

REPO_ID = "me/union-test"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
UPLOADED = {
    "config.json": b'{"model_type": "bert"}',
    "model.safetensors": bytes(range(256)) * 8,
    "tokenizer.json": b'{"version": "1.0"}',
    "README.md": b"---\nlicense: mit\n---\n# union-test\n",
    "eval_results.json": b'{"pearson": 0.3}',
}
LOCAL_ONLY = {
    "checkpoint-500/model.safetensors": b"an intermediate checkpoint",
    "checkpoint-500/optimizer.pt": b"optimizer state",
    "runs/events.out.tfevents.1": b"tensorboard log",
    "train.lock": b"",
    ".cache/huggingface/upload/config.json.metadata": b"cache",
}


@pytest.fixture
def hub(monkeypatch):
    yield from serve(monkeypatch, "models", REPO_ID, COMMIT)


def checkpoint_folder(root: pathlib.Path) -> pathlib.Path:
    for name, content in {**UPLOADED, **LOCAL_ONLY}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def test_a_push_uploads_the_model_tokenizer_and_card_and_keeps_training_state_local(hub, tmp_path):
    folder = checkpoint_folder(tmp_path / "union-test")
    url = push_checkpoint(folder, REPO_ID, token="hf_local_test_token", commit_message="Upload union-test")
    assert url == f"{hub}/{REPO_ID}/commit/{COMMIT}"
    paths = [path for path, _, _ in FakeHub.requests]
    assert paths[0] == "/api/repos/create"
    create = json.loads(FakeHub.requests[0][2])
    assert (
        create["name"] == "union-test"
        and create["organization"] == "me"
        and create.get("type", "model") == "model"
    )
    commits = [(path, body) for path, _, body in FakeHub.requests if "/commit/" in path]
    assert len(commits) == 1
    assert committed_files(commits[0][1]) == UPLOADED  # every file up, byte for byte, and nothing else
    header = json.loads(commits[0][1].decode().splitlines()[0])
    assert header["key"] == "header" and header["value"]["summary"] == "Upload union-test"
    asked = {
        f["path"]
        for path, _, body in FakeHub.requests
        if "/preupload/" in path
        for f in json.loads(body)["files"]
    }
    assert asked == set(UPLOADED)  # the local-only files were never even offered
    assert all(
        auth == "Bearer hf_local_test_token"
        for path, auth, _ in FakeHub.requests
        if path.startswith("/api/models")
    )
    assert all(
        (folder / name).read_bytes() == content for name, content in {**UPLOADED, **LOCAL_ONLY}.items()
    )


def test_a_push_to_a_branch_creates_it_commits_there_and_a_second_push_reuses_it(hub, tmp_path):
    folder = checkpoint_folder(tmp_path / "union-test")
    patterns = tuple(hub_push.LOCAL_ONLY_PATTERNS)
    for _ in range(2):
        push_checkpoint(folder, REPO_ID, token="hf_local_test_token", revision="dev")
    paths = [path for path, _, _ in FakeHub.requests]
    assert paths.count(f"/api/models/{REPO_ID}/branch/dev") == 2  # created, then found (409)
    assert FakeHub.branches == {"main", "dev"}
    commits = [(path, body) for path, _, body in FakeHub.requests if "/commit/" in path]
    assert [path for path, _ in commits] == [f"/api/models/{REPO_ID}/commit/dev"] * 2  # never main
    assert all(committed_files(body) == UPLOADED for _, body in commits)
    assert all("/preupload/dev" in path for path in paths if "/preupload/" in path)
    assert hub_push.LOCAL_ONLY_PATTERNS == patterns  # the ignore list is not extended push after push


@pytest.mark.parametrize("strategy", ["every_save", "checkpoint", "all_checkpoints"])
def test_a_hub_strategy_other_than_end_is_refused(strategy):
    with pytest.raises(ValueError, match=f"--hub_strategy {strategy} is not supported"):
        hub_push.check_push_strategy(strategy)
    hub_push.check_push_strategy("end")


def test_train_union_refuses_a_hub_strategy_as_a_usage_error(tmp_path, capsys):
    argv = ["--dataset", "x.jsonl", "--output_dir", str(tmp_path / "o"), "--hub_strategy", "every_save"]
    with pytest.raises(SystemExit) as exit_:
        train_union.main(argv)
    assert exit_.value.code == 2 and "--hub_strategy every_save is not supported" in capsys.readouterr().err
