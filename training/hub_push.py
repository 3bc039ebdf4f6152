"""Upload a finished checkpoint folder to the Hub, failing with one clear message.

The training scripts push *after* everything is saved locally, so a push that fails
(no network, offline mode, no token, no write access) loses nothing: the error says what
went wrong and how to upload the saved folder later, instead of a traceback from deep
inside an HTTP client.
"""

from __future__ import annotations

import os
import shlex

from huggingface_hub import HfApi

# Trainer's resumable checkpoints and logs stay local; the Hub gets the model, tokenizer and card.
LOCAL_ONLY_PATTERNS = ["checkpoint-*", "checkpoint-*/**", "runs/**", "*.lock", ".cache/**"]


class PushError(RuntimeError):
    """The checkpoint was saved locally but could not be uploaded."""


def push_checkpoint(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str = "Upload checkpoint",
) -> str:
    """Create ``repo_id`` if needed and upload ``folder`` to it; returns the commit URL."""
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        commit = api.upload_folder(
            folder_path=os.fspath(folder),
            repo_id=repo_id,
            repo_type="model",
            commit_message=commit_message,
            ignore_patterns=LOCAL_ONLY_PATTERNS,
        )
    except Exception as error:  # any failure here must read as one message, not a library traceback
        excludes = [arg for pattern in LOCAL_ONLY_PATTERNS for arg in ("--exclude", pattern)]
        retry = shlex.join(["hf", "upload", repo_id, os.fspath(folder), ".", *excludes])
        raise PushError(
            f"Could not push {os.fspath(folder)!r} to the Hub repository {repo_id!r}: "
            f"{type(error).__name__}: {_first_line(error)}\n"
            f"The checkpoint is saved locally in {os.fspath(folder)!r}. Once the Hub is reachable "
            f"(network, `hf auth login`, HF_HUB_OFFLINE unset), upload it with:\n  {retry}"
        ) from None
    return str(getattr(commit, "commit_url", commit))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"
