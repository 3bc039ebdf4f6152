"""Test-wide setup: no test may reach the network, so the offline switches are set before
``huggingface_hub``/``evaluate``/``datasets`` are first imported (they read them once)."""

import os

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# precision="fp32" keeps torch's BLAS in tests (subprocesses included), so that a test's bits do not
# follow a timing; the tests of the timed choice unset it.
os.environ["STORY_QUALITY_FP32_LIBRARY"] = "torch"
# Caches (evaluate copies metric scripts there; this package keeps its timed choices) go to
# throw-away folders, not the user's home.
os.environ["HF_HOME"] = __import__("tempfile").mkdtemp(prefix="hf-home-")
os.environ["STORY_QUALITY_CACHE"] = __import__("tempfile").mkdtemp(prefix="story-quality-cache-")

import pathlib  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a non-local socket fails the test loudly."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if (
            isinstance(host, str)
            and host not in ("127.0.0.1", "localhost", "::1")
            and not host.startswith("/")
        ):
            raise AssertionError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def onednn_calls(monkeypatch) -> list[tuple[int, int]]:
    """Each product oneDNN computes from now on, as (rows, outputs); skips where torch has no oneDNN.
    Every caller reaches oneDNN through ``onednn_products.onednn_linear``, so this sees them all."""
    import torch

    from story_quality.bert_forward import onednn_products

    if onednn_products.onednn_refusal(torch.device("cpu")):
        pytest.skip(onednn_products.onednn_refusal(torch.device("cpu")))
    calls: list[tuple[int, int]] = []
    real = onednn_products.onednn_linear

    def recording(hidden, weight, bias):
        calls.append((hidden.reshape(-1, hidden.shape[-1]).shape[0], weight.shape[0]))
        return real(hidden, weight, bias)

    monkeypatch.setattr(onednn_products, "onednn_linear", recording)
    return calls
