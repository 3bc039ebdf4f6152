"""Argparse for the training commands: a parser that takes both spellings of every flag, and types
under which a bad number is a usage error naming the bound, before any work."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer no smaller than ``minimum``, with an error naming the bound."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


positive_number.__name__ = "number > 0"


def both_spellings(names: Sequence[str]) -> list[str]:
    """``names`` with each long option's other spelling added: ``--output-dir`` and ``--output_dir``.

    >>> both_spellings(["-o", "--output-dir"])
    ['-o', '--output-dir', '--output_dir']
    >>> both_spellings(["--max_length"])
    ['--max_length', '--max-length']
    """
    spelled = list(names)
    for name in names:
        if not name.startswith("--"):
            continue
        body = name[2:]
        other = "--" + (body.replace("-", "_") if "-" in body else body.replace("_", "-"))
        if other not in spelled:
            spelled.append(other)
    return spelled


class ScriptParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose every long option also answers to its other spelling, as the
    Trainer-based scripts' ``HfArgumentParser`` does (``--output-dir`` or ``--output_dir``);
    subcommands' parsers are of this class too. Help and errors name the spelling the script
    declares; the other is registered beside it, for parsing only."""

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*names, **kwargs)
        for other in both_spellings(names)[len(names) :]:
            self._option_string_actions.setdefault(other, action)
        return action

    def _get_option_tuples(self, option_string: str) -> list[tuple[Any, ...]]:
        """A prefix's matches, one per option (``--output`` matches both spellings of ``--output-dir``:
        one option, not an ambiguous prefix)."""
        matches: dict[int, tuple[Any, ...]] = {}
        for match in super()._get_option_tuples(option_string):
            matches.setdefault(id(match[0]), match)
        return list(matches.values())
