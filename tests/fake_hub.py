"""A local stand-in for the few Hub endpoints an upload uses, served over real HTTP on 127.0.0.1, so
the real ``huggingface_hub`` client pushes to it with no network."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from huggingface_hub import constants
from huggingface_hub.utils import _http


class FakeHub(BaseHTTPRequestHandler):
    """Answers repo creation, README metadata validation, the preupload question (every file a plain
    git blob), branch creation (409 for a branch that exists) and the commit of one repo; records
    every request as (path, authorization header, body). :func:`serve` sets the class fields."""

    repo_type = "models"  # the Hub's URL word for the repo's kind: models, spaces
    repo_id = "me/repo"
    user = "me"  # whoami's answer to any token; None: the Hub refuses the token (401)
    commit = "0123456789abcdef0123456789abcdef01234567"
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

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        if self.path == "/api/whoami-v2":  # recorded; the client's other questions (none needed) are not
            self.requests.append((self.path, self.headers.get("authorization", ""), b""))
        if self.path == "/api/whoami-v2" and self.user:
            self._answer({"type": "user", "name": self.user, "orgs": [{"name": "story-quality-metrics"}]})
        elif self.path == "/api/whoami-v2":
            self.send_error(401, "Invalid credentials in Authorization header")
        else:
            self.send_error(404, f"not an endpoint of this fake Hub: {self.path}")

    def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.requests.append((self.path, self.headers.get("authorization", ""), body))
        api = f"/api/{self.repo_type}/{self.repo_id}"
        if self.path == "/api/repos/create":
            self._answer({"url": self.repo_url(), "name": self.repo_id})
        elif self.path == "/api/validate-yaml":
            self._answer({"errors": [], "warnings": []})
        elif self.path.startswith(f"{api}/preupload/"):
            files = json.loads(body)["files"]
            self._answer(
                {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                    ]
                }
            )
        elif self.path.startswith(f"{api}/branch/"):
            self._create_branch(self.path.rsplit("/", 1)[1])
        elif self.path.startswith(f"{api}/commit/"):
            self._answer({"commitUrl": f"{self.repo_url()}/commit/{self.commit}", "commitOid": self.commit})
        else:
            self.send_error(404, f"not an endpoint of this fake Hub: {self.path}")

    def repo_url(self) -> str:
        kind = "" if self.repo_type == "models" else f"{self.repo_type}/"
        return f"http://127.0.0.1:{self.server.server_port}/{kind}{self.repo_id}"

    def _create_branch(self, branch: str) -> None:
        if branch in self.branches:
            self.send_error(409, f"branch {branch} exists")
            return
        self.branches.add(branch)
        self._answer({})


def serve(monkeypatch, repo_type: str, repo_id: str, commit: str = FakeHub.commit) -> Iterator[str]:
    """Serve a fresh :class:`FakeHub` for ``repo_id`` and point ``huggingface_hub`` at it; yields its
    address (a generator for a pytest fixture to ``yield from``)."""
    FakeHub.repo_type, FakeHub.repo_id, FakeHub.commit = repo_type, repo_id, commit
    FakeHub.requests, FakeHub.branches, FakeHub.user = [], {"main"}, "me"
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the suite runs offline; this Hub is local
    _http.close_session()
    yield endpoint
    _http.close_session()
    server.shutdown()
    server.server_close()


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
