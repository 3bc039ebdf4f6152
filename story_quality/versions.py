"""The oldest versions the library works with, checked where an older one would fail obscurely.

As ``transformers``' own ``check_min_version`` does for its examples: the library imports this
before it relies on a newer API (``from_pretrained(dtype=...)``, transformers 5's tokenizers and
the sentence-order head GRUEN's structure score reads), so an old install fails at once with
the package and the command that fixes it. CI installs exactly these versions in a second
environment and runs the fast suite against them. :func:`package_version` is this project's own
installed version, as every signature names it.
"""

from __future__ import annotations

import importlib.metadata

from packaging.version import Version

# This project's name on a package index.
DISTRIBUTION = "story-quality-metrics"
MINIMUM_VERSIONS = {
    "transformers": "5.6.0",
    "datasets": "4.0.0",
    "evaluate": "0.4.5",
    "accelerate": "1.0.0",
    "torch": "2.4.0",
}


def package_version() -> str:
    """The installed version of this project (``0+unknown`` when it is not installed)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def meets_floor(installed: str, floor: str) -> bool:
    """Whether version ``installed`` is at least ``floor``, as ``packaging`` (PEP 440) orders them: a
    local build (``+cpu``) of a release counts as it, a pre-release (``rc1``, ``.dev0``) does not.

    >>> meets_floor("2.13.0+cpu", "2.4.0"), meets_floor("5.6.0rc1", "5.6.0"), meets_floor("5.6.0", "5.6.0")
    (True, False, True)
    """
    return Version(installed) >= Version(floor)


def check_min_versions(*packages: str) -> None:
    """Raise ImportError naming each installed package older than its floor (default: all of them)."""
    stale = []
    for name in packages or MINIMUM_VERSIONS:
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a missing package fails at its own import, with its own name
        if not meets_floor(installed, MINIMUM_VERSIONS[name]):
            stale.append(f"{name} {installed} (needs >= {MINIMUM_VERSIONS[name]})")
    if stale:
        wanted = " ".join(f'"{name}>={MINIMUM_VERSIONS[name]}"' for name in packages or MINIMUM_VERSIONS)
        raise ImportError(
            f"story_quality needs newer packages: {', '.join(stale)}. Run: pip install -U {wanted}"
        )
