"""Where the library's warnings point: the first line outside it, the user's.

``warnings.warn``'s ``stacklevel`` counts frames, and a fixed count is right for one way in only:
a story scored through ``UnionScorer`` sits fewer frames below the user than one scored through
``evaluate.load(...).compute``. (Python 3.12's ``skip_file_prefixes`` does this; 3.10 and 3.11
lack it.)
"""

from __future__ import annotations

import sys

# Module names whose frames are the library's: this package, evaluate, and the metric scripts
# evaluate imports from its modules cache.
_LIBRARY_MODULES = ("story_quality", "evaluate", "evaluate_modules")


def _is_library(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in _LIBRARY_MODULES)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the calling function name the first
    frame outside the library (the calling function's own frame if none is)."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _is_library(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    return level
