"""A parser whose every long flag answers to both spellings: ``--output-dir`` and ``--output_dir``.

The Trainer-based scripts (``HfArgumentParser``) always took both; every other command of the
project (``story-quality``, the training and benchmark scripts) is built on :class:`ScriptParser`,
so a user never has to remember which spelling a command chose.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


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
        return _with_other_spellings(self, names, super().add_argument(*names, **kwargs))

    def add_argument_group(self, *args: Any, **kwargs: Any) -> argparse._ArgumentGroup:
        """A group whose flags answer to both spellings too (argparse's own groups bypass
        :meth:`add_argument`)."""
        group = _BothSpellingsGroup(self, *args, **kwargs)
        self._action_groups.append(group)
        return group

    def _get_option_tuples(self, option_string: str) -> list[tuple[Any, ...]]:
        """A prefix's matches, one per option (``--output`` matches both spellings of ``--output-dir``:
        one option, not an ambiguous prefix)."""
        matches: dict[int, tuple[Any, ...]] = {}
        for match in super()._get_option_tuples(option_string):
            matches.setdefault(id(match[0]), match)
        return list(matches.values())


class _BothSpellingsGroup(argparse._ArgumentGroup):
    """An argument group of a :class:`ScriptParser`."""

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action:
        return _with_other_spellings(self, names, super().add_argument(*names, **kwargs))


def _with_other_spellings(
    container: argparse._ActionsContainer, names: Sequence[str], action: argparse.Action
) -> argparse.Action:
    """``action`` registered under the other spelling of each of its long ``names`` too (for parsing
    only: help and errors name the declared spelling)."""
    for other in both_spellings(names)[len(names) :]:
        container._option_string_actions.setdefault(other, action)
    return action


def subcommand(
    commands: argparse._SubParsersAction, name: str, summary: str, description: str
) -> argparse.ArgumentParser:
    """The parser of the command ``name``: ``summary`` in the root's list of commands, and
    ``description`` (the command module's docstring) in its own help, laid out as written."""
    return commands.add_parser(
        name, help=summary, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
