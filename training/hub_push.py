"""Upload a finished checkpoint folder to the Hub, failing with one clear message.

The training scripts push *after* everything is saved locally, so a push that fails
(no network, offline mode, no token, no write access) loses nothing: the error says what
went wrong and how to upload the saved folder later, instead of a traceback from deep
inside an HTTP client.
"""

from __future__ import annotations

import os
import pathlib
import shlex

from huggingface_hub import HfApi

# Trainer's resumable checkpoints and logs stay local; the Hub gets the model, tokenizer and card.
# A tuple: huggingface_hub extends the list it is handed in place, so each push gets a fresh copy.
LOCAL_ONLY_PATTERNS = ("checkpoint-*", "checkpoint-*/**", "runs/**", "*.lock", ".cache/**")
# Trainer's --hub_strategy values; the scripts push once, after everything is saved: "end" alone.
PUSH_STRATEGY = "end"


class PushError(RuntimeError):
    """The checkpoint was saved locally but could not be uploaded."""


def repository_for(
    hub_model_id: str | None, output_dir: str | os.PathLike, token: str | None, push: bool
) -> str:
    """The one rule for where a run's checkpoint goes (the Trainer's): ``--hub_model_id`` when it names
    a namespace; else the logged-in user's namespace and ``--hub_model_id`` or the output folder's name.

    Without ``--push_to_hub`` nothing is asked of the Hub and the bare name is returned (the model card
    names it). A run never defaults to the project's organisation: a two-step run pushed there would
    overwrite a published checkpoint.
    """
    name = hub_model_id or pathlib.Path(output_dir).absolute().name
    if "/" in name or not push:
        return name
    try:
        user = HfApi(token=token).whoami()["name"]
    except Exception as error:  # no token, offline, unreachable Hub: one message before any training
        raise PushError(
            f"--push_to_hub without a namespace in --hub_model_id pushes to your own namespace "
            f"(YOUR_NAME/{name}), but the Hub could not say who you are ({type(error).__name__}: "
            f"{_first_line(error)}). Log in with `hf auth login` (or pass --hub_token), or name the "
            "repository in full with --hub_model_id NAMESPACE/NAME."
        ) from None
    return f"{user}/{name}"


def push_plan(repo_id: str, revision: str | None) -> str:
    """The line printed before training: where the checkpoint will be uploaded."""
    return (
        f"--push_to_hub: the checkpoint will be uploaded to the Hub repository {repo_id!r} "
        f"(branch {revision or 'main'!r}) once training ends."
    )


def check_revision(push: bool, revision: str | None) -> None:
    """Refuse ``--hub_revision`` without ``--push_to_hub``: it would be ignored without a word."""
    if revision and not push:
        raise ValueError(
            f"--hub_revision {revision} names the branch of a push, but --push_to_hub is not set: nothing "
            "would be uploaded. Add --push_to_hub true, or drop --hub_revision."
        )


def check_model_id(push: bool, hub_model_id: str | None) -> None:
    """Refuse ``--hub_model_id`` without ``--push_to_hub``: it would train and upload nothing, without a word."""
    if hub_model_id and not push:
        raise ValueError(
            f"--hub_model_id {hub_model_id} names the repository of a push, but --push_to_hub is not set: "
            "nothing would be uploaded. Add --push_to_hub true, or drop --hub_model_id."
        )


def push_checkpoint(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str = "Upload checkpoint",
    revision: str | None = None,
) -> str:
    """Create ``repo_id`` if needed and upload ``folder`` to it, on branch ``revision`` (created from
    ``main`` when missing; None: ``main``); returns the commit URL."""
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        if revision and revision != "main":
            api.create_branch(repo_id, branch=revision, repo_type="model", exist_ok=True)
        commit = api.upload_folder(
            folder_path=os.fspath(folder),
            repo_id=repo_id,
            repo_type="model",
            revision=revision,
            commit_message=commit_message,
            ignore_patterns=list(LOCAL_ONLY_PATTERNS),
        )
    except Exception as error:  # any failure here must read as one message, not a library traceback
        raise PushError(push_failure(folder, repo_id, revision, error)) from None
    return str(getattr(commit, "commit_url", commit))


def push_failure(folder: str | os.PathLike, repo_id: str, revision: str | None, error: BaseException) -> str:
    """What failed, and the ``hf upload`` command that uploads the saved folder later."""
    excludes = [arg for pattern in LOCAL_ONLY_PATTERNS for arg in ("--exclude", pattern)]
    branch = ["--revision", revision] if revision else []
    retry = shlex.join(["hf", "upload", repo_id, os.fspath(folder), ".", *branch, *excludes])
    where = f"{repo_id!r}" + (f" (branch {revision!r})" if revision else "")
    return (
        f"Could not push {os.fspath(folder)!r} to the Hub repository {where}: "
        f"{type(error).__name__}: {_first_line(error)}\n"
        f"The checkpoint is saved locally in {os.fspath(folder)!r}. Once the Hub is reachable "
        f"(network, `hf auth login`, HF_HUB_OFFLINE unset), upload it with:\n  {retry}"
    )


def check_push_strategy(strategy: object) -> None:
    """Refuse a ``--hub_strategy`` given other than ``end``: the scripts push once, after the model, its
    card and records are saved (intermediate pushes of every save or checkpoint are not made). Not
    giving the flag (Trainer's default reads ``every_save``) means that one push at the end."""
    value = str(getattr(strategy, "value", strategy))
    if value != PUSH_STRATEGY:
        raise ValueError(
            f"--hub_strategy {value} is not supported: these scripts push once, at the end, after the "
            f"model, its card and records are saved (Trainer's '{PUSH_STRATEGY}'); drop the flag. Checkpoints "
            "stay local; upload one yourself with `hf upload REPO OUTPUT_DIR/checkpoint-N`."
        )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"
