"""One spec per metric option: its name, type, range or choices, default and help, written once.

Each metric lists its options (``story_quality.union.options.UNION_OPTIONS``,
``story_quality.gruen.options.GRUEN_OPTIONS``); from that list come the checks every call
runs (:meth:`OptionSpec.check`), the ``story-quality score`` flags (:func:`add_flags`) and the
option tables of the metric cards (:mod:`story_quality.option_tables`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from story_quality import validation
from story_quality.precision import PRECISIONS

# What each kind of option takes, as the cards and --help write it.
KINDS = {
    "count": "int",
    "choice": "str",
    "flag": "bool",
    "model": "str (Hub id or folder)",
    "revision": "str",
    "device": "str, int or torch.device",
}


@dataclasses.dataclass(frozen=True)
class Option:
    """One keyword argument of a metric's ``compute``.

    ``kind`` is one of :data:`KINDS`: ``count`` an integer of at least ``minimum``, ``choice`` one
    of ``choices``, ``flag`` True or False only, ``model`` a Hub id or a folder, ``revision`` a
    Hub revision, ``device`` where to run. A ``default`` of None means "not given": the metric
    decides (``default_text`` says how).
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: int = 1
    default_text: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: unknown kind {self.kind!r}; one of {list(KINDS)}")
        if (self.kind == "choice") != bool(self.choices):
            raise ValueError(f"option {self.name}: a choice option, and only one, lists its choices")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """``value`` as the metric uses it, or the error naming this option (None: not given)."""
        if self.kind == "device":
            return validation.check_device(value)
        if value is None and self.default is None:
            return None
        if self.kind == "count":
            return validation.check_count(value, self.name, self.minimum)
        if self.kind == "choice":
            return validation.check_choice(value, self.name, self.choices)
        if self.kind == "flag":
            return validation.check_flag(value, self.name)
        if self.kind == "model" and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise TypeError(f"{self.name} must be a non-empty string, got {type(value).__name__} {value!r}.")
        return value

    def type_text(self) -> str:
        """The type and range, as the card's table writes it."""
        if self.kind == "count":
            return f"int >= {self.minimum}"
        if self.kind == "choice":
            return " or ".join(f'`"{choice}"`' for choice in self.choices)
        return KINDS[self.kind]

    def shown_default(self) -> str:
        if self.default_text is not None:
            return self.default_text
        return "None" if self.default is None else repr(self.default)

    def table_default(self) -> str:
        """The default as the card's table writes it: a value in code style, a description as it is."""
        if self.default_text is not None:
            return self.default_text
        return f'`"{self.default}"`' if isinstance(self.default, str) else f"`{self.default}`"

    def parse_flag(self, text: str) -> Any:
        """A command-line value, converted and checked (argparse prints the error with the flag)."""
        try:
            return self.check(int(text) if self.kind == "count" else text)
        except (TypeError, ValueError) as error:
            raise argparse.ArgumentTypeError(str(error)) from None


# Where a metric runs: both metrics take it alike.
DEVICE = Option(
    "device",
    "device",
    None,
    "where to run: cpu, cuda, cuda:1 ...",
    default_text="the first GPU, else the CPU",
)
# The arithmetic: both metrics take it alike (story_quality.precision).
PRECISION = Option(
    "precision",
    "choice",
    "fp32",
    "the arithmetic: fp32, or bf16 autocast on GPUs with bf16 and CPUs with AMX or AVX-512 BF16 "
    "(faster; scores move slightly; refused on other hardware); the signature records it",
    choices=PRECISIONS,
)


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """A metric's options, in the order its ``compute`` takes them."""

    metric: str
    options: tuple[Option, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(option.name for option in self.options)

    def __getitem__(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(f"{self.metric} has no option {name!r}; it has {', '.join(self.names)}")

    def defaults(self) -> dict[str, Any]:
        return {option.name: option.default for option in self.options}

    def check(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option checked, those not given at their defaults; an unknown name is refused."""
        validation.check_options(given, self.names)
        return {option.name: option.check(given.get(option.name, option.default)) for option in self.options}


def add_flags(
    parser: argparse.ArgumentParser, specs: Sequence[OptionSpec], default_texts: Mapping[str, str] = {}
) -> None:
    """One flag per option of ``specs``; an option several metrics take (same kind and default) gets
    one flag whose help says what it does in each. ``default_texts`` overrides what a help says of a
    default. Every flag defaults to None, so that the options given can be told apart."""
    for name in dict.fromkeys(name for spec in specs for name in spec.names):
        holders = [spec for spec in specs if name in spec.names]
        option = holders[0][name]
        if any((spec[name].kind, spec[name].default) != (option.kind, option.default) for spec in holders):
            raise ValueError(f"option {name}: the metrics take it with different types or defaults")
        helps = dict.fromkeys(spec[name].help for spec in holders)
        about = option.help if len(helps) == 1 and len(holders) > 1 else None
        described = about or "; ".join(f"{spec.metric}: {spec[name].help}" for spec in holders)
        default = default_texts.get(name, option.shown_default())
        help_text = f"{described} (default: {default})".replace("%", "%%")
        if option.kind == "flag":
            parser.add_argument(option.flag, action=argparse.BooleanOptionalAction, help=help_text)
        elif option.kind == "choice":
            parser.add_argument(option.flag, choices=option.choices, help=help_text)
        elif option.kind == "count":
            parser.add_argument(option.flag, type=option.parse_flag, metavar="N", help=help_text)
        else:
            parser.add_argument(option.flag, help=help_text)


def given_flags(args: argparse.Namespace, spec: OptionSpec) -> dict[str, Any]:
    """The options of ``spec`` given on the command line (a flag left at None is left to the metric)."""
    return {name: getattr(args, name) for name in spec.names if getattr(args, name, None) is not None}
