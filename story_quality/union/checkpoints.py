"""Which checkpoint each UNION config name means: the one place their names are written.

``"default"`` is the shipped default, a checkpoint inside the project (MiniLM fine-tuned on ROCStories and
WritingPrompts, fp16 safetensors, package data of the installed project), verified file by file against a
manifest whose own sha256 is recorded here, so it loads offline and a damaged copy is named.
``"roc"`` and ``"wp"`` once named BERT-base Hub checkpoints that were never published: they are
refused with the way to build one (``training/train_union.py --normalization roc|wp``), and stay
only as the Hub ids a checkpoint trained with that preset is published under.
"""

from __future__ import annotations

import pathlib

from story_quality.checkpoints.files import sha256_of
from story_quality.checkpoints.reference import CheckpointReference

# Where a checkpoint trained with each corpus preset is pushed (training/union_presets.py); none is
# published yet, so these are not config names of the metric (resolve_checkpoint refuses them).
PUBLISHED_CHECKPOINTS: dict[str, str] = {
    "roc": "story-quality-metrics/union-roc",
    "wp": "story-quality-metrics/union-wp",
}
SHIPPED_DEFAULT = "default"
# The package data that carries the shipped default: metrics/union/ of the repository, which is
# story_quality/metrics/union/ in a clone (a link) and once installed alike.
SHIPPED_DEFAULT_PACKAGE = "story_quality.metrics.union"
SHIPPED_DEFAULT_FOLDER = "default_checkpoint"
MANIFEST = "SHA256SUMS"
# sha256 of the shipped default's MANIFEST, which lists the sha256 of every other file in it.
SHIPPED_DEFAULT_MANIFEST_SHA256 = "d9f07ca93314b05ca71a0d1f6cc23065126319a1843ddb6c3b1a0f1443be4b4b"


class CheckpointError(OSError):
    """A UNION checkpoint that cannot be loaded: the message names it, the cause and what to do."""


def shipped_default_dir() -> pathlib.Path:
    """The shipped default's folder, package data of ``story_quality.metrics.union``."""
    folder = pathlib.Path(__file__).resolve().parents[1] / "metrics" / "union" / SHIPPED_DEFAULT_FOLDER
    if folder.is_dir():
        return folder
    raise CheckpointError(
        f"The shipped UNION checkpoint ('{SHIPPED_DEFAULT}') was not found: it is package data of the "
        f"'story-quality-metrics' project ({SHIPPED_DEFAULT_PACKAGE.replace('.', '/')}/{SHIPPED_DEFAULT_FOLDER}/). "
        "Install the project (pip install story-quality-metrics, or pip install -e . in a clone), or "
        "pass a local checkpoint folder as the config name."
    )


def read_manifest(folder: pathlib.Path) -> dict[str, str]:
    """``file name -> sha256`` from a folder's ``SHA256SUMS`` (``sha256sum`` format)."""
    entries = {}
    for line in (folder / MANIFEST).read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            entries[name.lstrip("*")] = digest
    return entries


def verify_checkpoint(folder: pathlib.Path, manifest_sha256: str) -> None:
    """Check every file of ``folder`` against its manifest, and the manifest against ``manifest_sha256``.

    Raises :class:`CheckpointError` naming the first missing or damaged file.
    """
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise CheckpointError(f"{manifest} is missing: the checkpoint in {folder} cannot be verified.")
    if sha256_of(manifest) != manifest_sha256:
        raise CheckpointError(f"{manifest} is damaged or was changed (its sha256 is not the recorded one).")
    for name, digest in read_manifest(folder).items():
        path = folder / name
        if not path.is_file():
            raise CheckpointError(
                f"{path} is missing from the shipped default UNION checkpoint; reinstall the project."
            )
        if sha256_of(path) != digest:
            raise CheckpointError(
                f"{path} is damaged or was changed (sha256 differs from {MANIFEST}); reinstall the project."
            )


def alternative_hint() -> str:
    """What to load instead of a checkpoint that failed: the shipped default, or a local folder."""
    return (
        "The shipped default loads offline: "
        f'evaluate.load(story_quality.metric_path("union"), "{SHIPPED_DEFAULT}").'
    )


def is_config_name(name: str) -> bool:
    """Whether ``name`` is one of the names the metric reserves ("default", and the unpublished
    "roc" / "wp" it refuses) rather than a Hub id or a folder.

    >>> is_config_name("default"), is_config_name("wp"), is_config_name("someone/their-union")
    (True, True, False)
    """
    return name == SHIPPED_DEFAULT or name in PUBLISHED_CHECKPOINTS


def resolve_checkpoint(name: str) -> CheckpointReference:
    """What a config name means: the shipped default's verified folder, a local folder, or a Hub id
    (``org/model@revision`` pins one); ``"roc"`` / ``"wp"`` are refused.

    >>> resolve_checkpoint("someone/their-union@v1")
    CheckpointReference(name='someone/their-union@v1', source='someone/their-union', revision='v1', local=False)
    """
    if name == SHIPPED_DEFAULT:
        folder = shipped_default_dir()
        verify_checkpoint(folder, SHIPPED_DEFAULT_MANIFEST_SHA256)
        return CheckpointReference.folder(name, folder)
    reference = CheckpointReference.parse(name)
    if reference.local:
        return reference
    if reference.source in PUBLISHED_CHECKPOINTS:  # never published: say how to build one
        preset = reference.source
        raise CheckpointError(
            f"{name!r} names no checkpoint: the BERT-base UNION for the {preset!r} preset "
            f"({PUBLISHED_CHECKPOINTS[preset]}) was never published. Build one with "
            f"python training/train_union.py --normalization {preset} ... (training/README.md) and pass its "
            f"output folder as the config name, or pass a Hub id. {alternative_hint()}"
        )
    if reference.source == SHIPPED_DEFAULT:
        raise CheckpointError(
            f"{name!r}: the shipped default {SHIPPED_DEFAULT!r} takes no revision (it is inside the package)."
        )
    return reference
