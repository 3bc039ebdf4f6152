"""A push that succeeds: ``push_checkpoint`` through the real ``huggingface_hub`` client, over real HTTP,
to a local server on 127.0.0.1 that answers the few Hub endpoints an upload uses."""

from __future__ import annotations

import base64
import json
import pathlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from huggingface_hub import constants
from huggingface_hub.utils import _http

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


class FakeHub(BaseHTTPRequestHandler):
    """Answers repo creation, the preupload question (every file a plain git blob), README metadata
    validation and the commit; records every request."""

    requests: list[tuple[str, str, bytes]] = []
    branches: set[str] = {"main"}

    def log_message(self, *args) -> None:  # keep the test output quiet
        pass

    def _answer(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.requests.append((self.path, self.headers.get("authorization", ""), body))
        base = f"http://127.0.0.1:{self.server.server_port}"
        if self.path == "/api/repos/create":
            self._answer({"url": f"{base}/{REPO_ID}", "name": REPO_ID})
        elif self.path == "/api/validate-yaml":
            self._answer({"errors": [], "warnings": []})
        elif self.path.startswith(f"/api/models/{REPO_ID}/preupload/"):
            files = json.loads(body)["files"]
            self._answer(
                {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                    ]
                }
            )
        elif self.path.startswith(f"/api/models/{REPO_ID}/branch/"):
            branch = self.path.rsplit("/", 1)[1]
            if branch in self.branches:
                self.send_error(409, f"branch {branch} exists")
                return
            self.branches.add(branch)
            self._answer({})
        elif self.path.startswith(f"/api/models/{REPO_ID}/commit/"):
            self._answer({"commitUrl": f"{base}/{REPO_ID}/commit/{COMMIT}", "commitOid": COMMIT})
        else:
            self.send_error(404, f"not an endpoint of this fake Hub: {self.path}")


@pytest.fixture
def hub(monkeypatch):
    FakeHub.requests = []
    FakeHub.branches = {"main"}
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the suite runs offline; this Hub is local
    _http.close_session()
    yield endpoint
    _http.close_session()
    server.shutdown()
    server.server_close()


def checkpoint_folder(root: pathlib.Path) -> pathlib.Path:
    for name, content in {**UPLOADED, **LOCAL_ONLY}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def committed_files(body: bytes) -> dict[str, bytes]:
    """The files of a commit's NDJSON payload, decoded."""
    files = {}
    for line in body.decode().splitlines():
        entry = json.loads(line)
        if entry["key"] == "file":
            value = entry["value"]
            assert value["encoding"] == "base64"
            files[value["path"]] = base64.b64decode(value["content"])
    return files


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
