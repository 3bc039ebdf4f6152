"""A checkpoint reference: what a user names a model by, parsed once.

``org/model``, ``org/model@REVISION`` (a Hub id, pinned to a branch, tag or commit) or a local
folder (``~`` expanded; a folder is never split at an ``@``, which a path may hold). Every
place that loads, labels or hashes a checkpoint reads this one type: whether a name is a folder
is decided here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True)
class CheckpointReference:
    """A parsed checkpoint name: ``source`` is what ``from_pretrained`` loads (a folder's path or a
    Hub repo id), ``revision`` the Hub revision (None: the latest, or a folder), ``name`` what the
    user wrote (or the config name that stood for it)."""

    name: str
    source: str
    revision: str | None
    local: bool
    # ``name`` is a config name standing for the folder (``"default"``), not a path.
    config_name: bool = dataclasses.field(default=False, repr=False)

    @classmethod
    def parse(cls, text: str, revision: str | None = None) -> CheckpointReference:
        """``text`` as a folder when one exists there, else as ``REPO[@REVISION]`` on the Hub;
        ``revision`` pins a Hub id written without one.

        >>> CheckpointReference.parse("org/model@abc123")
        CheckpointReference(name='org/model@abc123', source='org/model', revision='abc123', local=False)
        >>> CheckpointReference.parse("org/model", revision="v1").revision
        'v1'
        """
        path = os.path.expanduser(text)
        if os.path.isdir(path):
            return cls(text, path, None, True)
        repo_id, at, pinned = text.rpartition("@") if "@" in text else (text, "", "")
        if at and pinned and revision is not None and pinned != revision:
            raise ValueError(f"{text!r} pins revision {pinned!r} and was also given revision {revision!r}.")
        return cls(text, repo_id if at else text, (pinned or None) if at else revision, False)

    @classmethod
    def folder(cls, name: str, path: str | os.PathLike) -> CheckpointReference:
        """A folder that a config name (``"default"``) stands for."""
        return cls(name, os.fspath(path), None, True, config_name=True)

    @property
    def hub_revision(self) -> str:
        """The Hub revision as a signature writes it (``main`` when none is pinned)."""
        return self.revision or "main"

    def label(self) -> str:
        """How a signature names the checkpoint: ``NAME@sha256:XXXXXXXXXXXX`` for a folder (the sha256
        of its weights, config and tokenizer files), ``REPO@REVISION`` for a Hub id.

        >>> CheckpointReference.parse("org/model@abc123").label()
        'org/model@abc123'
        """
        if not self.local:
            return str(self)
        from story_quality.checkpoints.files import checkpoint_sha256

        sha = checkpoint_sha256(self.source)
        # A folder named by its path shows its last part; a config name, or a name written with
        # "~", shows as written.
        shown = (
            pathlib.Path(self.name).name if not self.config_name and os.path.isdir(self.name) else self.name
        )
        return f"{shown}@sha256:{sha[:12] if sha else 'none'}"

    def identity(self) -> tuple[str, str | None]:
        """What tells two references to one checkpoint apart: a folder's real path ("run", "run/" and
        "./run" are one), a Hub id with its revision."""
        return (os.path.realpath(self.source), None) if self.local else (self.source, self.revision)

    @staticmethod
    def name_in_label(label: str) -> str:
        """The checkpoint's name in a :meth:`label` (what comes before its last ``@``).

        >>> CheckpointReference.name_in_label("default@sha256:0123456789ab")
        'default'
        """
        return label.rpartition("@")[0] or label

    def __str__(self) -> str:
        """The checkpoint as a message names it: a folder's path, or ``REPO@REVISION``."""
        return self.source if self.local else f"{self.source}@{self.hub_revision}"


def repeated_checkpoint(names: list[str] | tuple[str, ...]) -> tuple[str, str, str] | None:
    """The first checkpoint of ``names`` that is one given earlier, as ``(earlier, later, why)``, or None.

    One model under two names: a folder's real path twice ("run", "run/", "./run", a link to it), two
    folders whose weights have one sha256 (a copy of a run), or a Hub id twice at one revision.
    """
    from story_quality.checkpoints.files import weights_sha256

    seen: dict[object, str] = {}
    for name in names:
        reference = CheckpointReference.parse(name)
        keys: list[tuple[object, str]] = [(reference.identity(), "the same folder")]
        if reference.local:
            digest = weights_sha256(reference.source)
            if digest is not None:
                keys.append((("weights", digest), f"the same weights (sha256 {digest[:12]})"))
        for key, why in keys:
            if key in seen:
                return seen[key], name, why
        for key, _ in keys:
            seen.setdefault(key, name)
    return None


def hash_ahead(checkpoints: Iterable[CheckpointReference]) -> None:
    """Start hashing the local folders among ``checkpoints`` for their labels, on one background
    thread (:func:`story_quality.checkpoints.files.hash_ahead`); a Hub id adds nothing."""
    from story_quality.checkpoints.files import hash_ahead as hash_folders_ahead

    hash_folders_ahead(*(checkpoint.source for checkpoint in checkpoints if checkpoint.local))
