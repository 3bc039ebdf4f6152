"""The BibTeX entries of the papers the project implements and cites, read from ``citations.bib``."""

from __future__ import annotations

import functools
import pathlib
import re

CITATIONS = pathlib.Path(__file__).with_name("citations.bib")


@functools.cache
def citation(key: str) -> str:
    """The BibTeX entry ``key`` of the package's ``citations.bib``, ending with a newline.

    >>> citation("guan-huang-2020-union").splitlines()[0]
    '@inproceedings{guan-huang-2020-union,'
    """
    entries = {
        entry.group(1): entry.group(0) + "\n"
        for entry in re.finditer(
            r"^@\w+\{([^,]+),.*?^\}$", CITATIONS.read_text(encoding="utf-8"), re.M | re.S
        )
    }
    if key not in entries:
        raise KeyError(f"No citation {key!r} in {CITATIONS.name}; it has {', '.join(entries)}.")
    return entries[key]
