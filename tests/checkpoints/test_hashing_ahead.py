"""A checkpoint folder hashed ahead, on a thread of its own, gives the signature's digest without
reading the folder again, and never leaves a caller waiting on a digest that cannot come."""

from __future__ import annotations

import hashlib
import threading

import pytest
from tiny_models import save_union_checkpoint

from story_quality.checkpoints import files
from story_quality.checkpoints.files import HASH_BLOCK, checkpoint_sha256, hash_ahead, sha256_of


@pytest.fixture(autouse=True)
def nothing_hashed_yet(monkeypatch):
    monkeypatch.setattr(files, "_HASHES", {})


@pytest.fixture
def folder(tmp_path):
    return save_union_checkpoint(tmp_path / "run")


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, str]]:
    """Each file hashed from now on, as (file name, the thread that read it)."""
    seen: list[tuple[str, str]] = []
    real = files.sha256_of

    def recording(path):
        seen.append((str(path).rsplit("/", 1)[-1], threading.current_thread().name))
        return real(path)

    monkeypatch.setattr(files, "sha256_of", recording)
    return seen


def test_a_folder_hashed_ahead_is_read_once_and_on_the_hashing_thread(folder, reads):
    hash_ahead(folder)
    digest = checkpoint_sha256(folder)
    assert {thread for _, thread in reads} == {"sha256-ahead"}
    assert sorted(name for name, _ in reads) == sorted({name for name, _ in reads})  # each file once
    assert "model.safetensors" in {name for name, _ in reads} and "config.json" in {name for name, _ in reads}
    hash_ahead(folder)  # nothing left to read
    assert checkpoint_sha256(folder) == digest and len(reads) == len(set(reads))
    files._HASHES.clear()
    assert checkpoint_sha256(folder) == digest  # the same digest read on the caller's own thread
    assert reads[-1][1] == threading.current_thread().name


def test_a_file_changed_after_it_was_hashed_ahead_is_read_again(folder):
    hash_ahead(folder)
    before = checkpoint_sha256(folder)
    config = folder / "config.json"
    config.write_text(config.read_text().replace("{", '{\n  "note": "changed",', 1))
    after = checkpoint_sha256(folder)
    files._HASHES.clear()
    assert after != before and after == checkpoint_sha256(folder)


def test_a_file_that_failed_ahead_is_hashed_again_by_the_caller(folder, monkeypatch):
    real = files.sha256_of
    failed = threading.Event()

    def failing(path):
        failed.set()
        raise PermissionError(f"not readable now: {path}")

    monkeypatch.setattr(files, "sha256_of", failing)
    hash_ahead(folder)
    assert failed.wait(5)
    monkeypatch.setattr(files, "sha256_of", real)
    digest = checkpoint_sha256(folder)
    files._HASHES.clear()
    assert digest == checkpoint_sha256(folder)


def test_a_forked_child_does_not_wait_on_its_parents_hashing_thread(folder, monkeypatch):
    """A child forked while the parent's thread hashed has no such thread: it reads the file itself."""
    real = files.sha256_of
    release = threading.Event()

    def stuck(path):  # the parent's thread, never done while the "child" asks
        release.wait(10)
        return real(path)

    monkeypatch.setattr(files, "sha256_of", stuck)
    hash_ahead(folder)
    monkeypatch.setattr(files, "sha256_of", real)
    parent = files.os.getpid()
    monkeypatch.setattr(files.os, "getpid", lambda: parent + 1)
    waiter = threading.Thread(target=checkpoint_sha256, args=(folder,), daemon=True)
    waiter.start()
    waiter.join(5)
    release.set()
    for thread in threading.enumerate():  # the parent's thread done before the next test
        if thread.name == "sha256-ahead":
            thread.join(10)
    assert not waiter.is_alive(), "the child waited on a thread it does not have"


def test_a_folder_without_weights_starts_nothing(tmp_path, reads):
    (tmp_path / "config.json").write_text("{}")
    hash_ahead(tmp_path)
    assert files._HASHES == {} and reads == [] and checkpoint_sha256(tmp_path) is None


def test_folders_hashed_ahead_together_are_read_one_after_another_on_one_thread(tmp_path, monkeypatch):
    real = files.sha256_of
    order: list[tuple[str, int]] = []

    def recording(path):
        order.append((str(path), threading.get_ident()))
        return real(path)

    monkeypatch.setattr(files, "sha256_of", recording)
    first, second = save_union_checkpoint(tmp_path / "a"), save_union_checkpoint(tmp_path / "b")
    hash_ahead(first, second, first)  # a folder named twice is read once
    digests = [checkpoint_sha256(first), checkpoint_sha256(second)]
    assert len({thread for _, thread in order}) == 1 and threading.get_ident() not in {t for _, t in order}
    assert len(order) == len({path for path, _ in order})
    assert [path.startswith(str(tmp_path / "a")) for path, _ in order] == sorted(
        (path.startswith(str(tmp_path / "a")) for path, _ in order), reverse=True
    )  # the first folder's files, then the second's
    files._HASHES.clear()
    assert digests == [checkpoint_sha256(first), checkpoint_sha256(second)]


@pytest.mark.parametrize("size", [0, 1, HASH_BLOCK - 1, HASH_BLOCK, HASH_BLOCK + 1, 2 * HASH_BLOCK + 7])
def test_a_files_sha256_is_its_bytes_sha256_across_block_edges(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    path = tmp_path / "weights.bin"
    path.write_bytes(data)
    assert sha256_of(path) == hashlib.sha256(data).hexdigest()
