"""Names a package offers from one of its modules, imported when first asked for (PEP 562).

``story_quality.union`` and ``story_quality.gruen`` offer their scorer this way, so that importing
the package (its options, its citation) needs none of the scorer's dependencies.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any


def lazy_names(package: str, module: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each of ``names`` from ``package.module``, imported then.

    >>> getattr_ = lazy_names("os", "path", ["join"])
    >>> getattr_("join") is __import__("os.path").path.join
    True
    """
    offered = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name in offered:
            return getattr(importlib.import_module(f"{package}.{module}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
