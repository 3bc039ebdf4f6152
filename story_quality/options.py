"""One spec per metric option: its name, type, range or choices, default and help, written once.

Each metric lists its options (``story_quality.union.options.UNION_OPTIONS``,
``story_quality.gruen.options.GRUEN_OPTIONS``); from that list come the checks every call
runs (:meth:`OptionSpec.check`, with the value checks below), the scorers' keyword arguments
(:meth:`OptionSpec.keywords`), the metric docstrings' argument lists (:meth:`OptionSpec.args_text`),
the ``story-quality score`` flags (:func:`add_flags`) and the option tables of the metric cards
(:mod:`story_quality.cli.option_tables`). Nothing here imports torch: a ``device`` is resolved by
:mod:`story_quality.devices` when a call checks one.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy

from story_quality.precision import PRECISIONS
from story_quality.warning_origin import user_stacklevel


def check_count(
    value: Any, name: str, minimum: int = 1, maximum: int | None = None, why_maximum: str = ""
) -> int:
    """An integer option (not a bool, float or string) no smaller than ``minimum`` and, when
    ``maximum`` is given, no larger (``why_maximum`` says why, in the error)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        reason = f" ({why_maximum})" if why_maximum else ""
        raise ValueError(f"{name} must be at most {maximum}{reason}, got {value}.")
    return int(value)


def check_flag(value: Any, name: str) -> bool:
    """A yes/no option: True or False only (numpy's bool too), never a string, number or None.

    ``bool("false")`` is True, so a string is refused rather than read; 0 and 1 are refused too,
    so that every flag is written one way.

    >>> check_flag(False, "coherence")
    False
    >>> check_flag("false", "coherence")
    Traceback (most recent call last):
    ...
    TypeError: coherence must be True or False, got str 'false'.
    """
    if isinstance(value, numpy.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}.")
    return value


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """A string option that must be one of ``choices``.

    >>> check_choice("windows", "long_stories", ("head", "windows"))
    'windows'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def check_window(max_length: Any, limit: int, minimum: int) -> int | None:
    """The caller's word-piece window (None: the model's), between ``minimum`` and the model's ``limit``."""
    if max_length is None:
        return None
    value = check_count(max_length, "max_length", minimum)
    if value > limit:
        raise ValueError(
            f"max_length must be at most the model's window of {limit} word pieces, got {value}."
        )
    return value


# What a user may pass to compute to choose union's checkpoint, which is evaluate.load's config_name.
CONFIG_NAME_ARGUMENTS = ("checkpoint", "config_name", "model", "model_name", "model_name_or_path", "revision")


def check_options(
    given: Mapping[str, Any],
    known: Sequence[str],
    config_name_arguments: Sequence[str] = (),
    caller: str = "compute()",
) -> None:
    """Refuse a misspelt or unknown option, naming ``caller``, the option and the closest known one; one
    of ``config_name_arguments`` (a checkpoint chosen at compute time) is sent to evaluate.load.

    >>> check_options({"checkpoint": "org/model"}, ["batch_size"], CONFIG_NAME_ARGUMENTS)
    Traceback (most recent call last):
    ...
    TypeError: compute() takes no 'checkpoint': the checkpoint is evaluate.load's second argument, config_name (evaluate.load(path, "org/model@revision")); load one metric instance per checkpoint.
    """
    import difflib

    for name in given:
        if name in config_name_arguments:
            raise TypeError(
                f"compute() takes no {name!r}: the checkpoint is evaluate.load's second argument, config_name "
                '(evaluate.load(path, "org/model@revision")); load one metric instance per checkpoint.'
            )
        if name not in known:
            close = difflib.get_close_matches(name, [*known, "predictions", "references"], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{caller} got an unknown argument {name!r}{hint} It takes {', '.join(known)}.")


# What each kind of option takes, as the cards and --help write it.
KINDS = {
    "count": "int",
    "choice": "str",
    "flag": "bool",
    "model": "str (Hub id, @revision pins it, or folder)",
    "revision": "str",
    "device": "str, int or torch.device",
}


@dataclasses.dataclass(frozen=True)
class Option:
    """One keyword argument of a metric's ``compute``.

    ``kind`` is one of :data:`KINDS`: ``count`` an integer of at least ``minimum`` (and at most
    ``maximum`` when given, for the reason ``why_maximum``), ``choice`` one
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
    maximum: int | None = None
    why_maximum: str = ""
    # What the docs say of a default the metric decides; a function when saying it reads a file
    # (the shipped default's config), so that importing the spec reads nothing.
    default_text: str | Callable[[], str] | None = None

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
            from story_quality.devices import check_device  # torch, only when a call resolves a device

            return check_device(value)
        if value is None and self.default is None:
            return None
        if self.kind == "count":
            return check_count(value, self.name, self.minimum, self.maximum, self.why_maximum)
        if self.kind == "choice":
            return check_choice(value, self.name, self.choices)
        if self.kind == "flag":
            return check_flag(value, self.name)
        if self.kind == "model" and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise TypeError(f"{self.name} must be a non-empty string, got {type(value).__name__} {value!r}.")
        return value

    def type_text(self) -> str:
        """The type and range, as the card's table writes it."""
        if self.kind == "count":
            if self.maximum is not None:
                return f"int from {self.minimum} to {self.maximum}"
            return f"int >= {self.minimum}"
        if self.kind == "choice":
            return " or ".join(f'`"{choice}"`' for choice in self.choices)
        return KINDS[self.kind]

    def described_default(self) -> str | None:
        """What the docs say of the default, when it is more than a value."""
        return self.default_text() if callable(self.default_text) else self.default_text

    def shown_default(self) -> str:
        described = self.described_default()
        if described is not None:
            return described
        return "None" if self.default is None else repr(self.default)

    def table_default(self) -> str:
        """The default as the card's table writes it: a value in code style, a description as it is."""
        described = self.described_default()
        if described is not None:
            return described
        return f'`"{self.default}"`' if isinstance(self.default, str) else f"`{self.default}`"

    def parameter(self) -> inspect.Parameter:
        """This option as a keyword parameter of a scorer's ``score``."""
        kind = {"count": "int", "flag": "bool", "device": "str | int | torch.device"}.get(self.kind, "str")
        annotation = f"{kind} | None" if self.default is None else kind
        return inspect.Parameter(
            self.name, inspect.Parameter.KEYWORD_ONLY, default=self.default, annotation=annotation
        )

    def arg_text(self) -> str:
        """This option as a docstring's ``Args:`` entry: name, type, default and help, its later lines
        indented under the first."""
        import textwrap

        help_text = self.help if self.help.endswith(".") else self.help + "."
        described = self.described_default()
        value = f'"{self.default}"' if isinstance(self.default, str) else repr(self.default)
        default = described if described is not None else value
        entry = f"{self.name} (`{self.type_text().replace('`', '')}`, default {default}): {help_text}"
        return "\n".join(textwrap.wrap(entry, 96, subsequent_indent="    ", break_on_hyphens=False))

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
    "the arithmetic: fp32, on a CPU multiplied by the faster of torch's BLAS and oneDNN (timed by a "
    "machine's first processes, then kept; the libraries' scores differ by float rounding, about 1e-7); fp32-onednn, fp32 "
    "with a CPU's linear layers multiplied by oneDNN whatever the timing (CPUs only); or bf16 autocast "
    "on GPUs with bf16 and CPUs with AMX or AVX-512 BF16 (faster; scores move slightly; refused on "
    "other hardware); the signature records it and the library that multiplied",
    choices=PRECISIONS,
)


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """A metric's options, in the order its ``compute`` takes them, and those it takes when loaded.

    ``loading`` are chosen when the metric is loaded (``evaluate.load``'s config_name, the scorer's
    constructor), not by ``compute``: the command line takes them as flags all the same, so that a
    flag of one metric given with the other is refused by the same rule (:attr:`command_line`).
    ``renamed`` pairs an option's old name with its new one: the old name is still taken, by
    ``compute``, a scorer's ``score`` and the command line, with a ``FutureWarning``, for one
    version (:meth:`current_names`, :func:`add_flags`).
    """

    metric: str
    options: tuple[Option, ...]
    loading: tuple[Option, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The names ``compute`` takes."""
        return tuple(option.name for option in self.options)

    @property
    def command_line(self) -> tuple[Option, ...]:
        """Every option the command line takes for this metric: ``compute``'s, then the loading ones."""
        return (*self.options, *self.loading)

    def __getitem__(self, name: str) -> Option:
        for option in self.command_line:
            if option.name == name:
                return option
        raise KeyError(f"{self.metric} has no option {name!r}; it has {', '.join(self.names)}")

    def defaults(self) -> dict[str, Any]:
        return {option.name: option.default for option in self.options}

    def current_names(self, given: Mapping[str, Any], caller: str = "compute()") -> dict[str, Any]:
        """``given`` with each old name of :attr:`renamed` replaced by its new one, with a
        ``FutureWarning``; an option given under both names is refused, naming ``caller``.

        >>> percentiles = Option("percentiles", "choice", None, "x", ("a",))
        >>> spec = OptionSpec("m", (percentiles,), renamed=(("rescale", "percentiles"),))
        >>> spec.current_names({"rescale": "a", "percentiles": "a"})
        Traceback (most recent call last):
        ...
        TypeError: compute() got both 'rescale' and 'percentiles', one option under its old and its new name: pass percentiles= only.
        """
        current = dict(given)
        for old, new in self.renamed:
            if old not in current:
                continue
            if new in current:
                raise TypeError(
                    f"{caller} got both {old!r} and {new!r}, one option under its old and its new name: "
                    f"pass {new}= only."
                )
            warnings.warn(
                f"{self.metric}'s {old}= is now called {new}=; the old name is taken for this version only.",
                FutureWarning,
                stacklevel=user_stacklevel(),
            )
            current[new] = current.pop(old)
        return current

    def check(
        self, given: Mapping[str, Any], caller: str = "compute()", leave_out: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Every option (but ``leave_out``) checked, those not given at their defaults; an old name of
        :attr:`renamed` is taken as its new one; an unknown name is refused, naming ``caller``."""
        given = self.current_names(given, caller)
        options = [option for option in self.options if option.name not in leave_out]
        check_options(given, [option.name for option in options], caller=caller)
        return {option.name: option.check(given.get(option.name, option.default)) for option in options}

    def keywords(self, function: Callable, *, leave_out: Sequence[str] = ()) -> Callable:
        """``function`` (``def f(self, texts, **options)``) with a signature naming each option of
        this spec (but ``leave_out``) as a keyword argument with its default: what ``help()``,
        editors and ``inspect`` show, so that a new option is declared here and nowhere else."""
        parameters = list(inspect.signature(function).parameters.values())[:-1]
        parameters += [option.parameter() for option in self.options if option.name not in leave_out]
        function.__signature__ = inspect.Signature(parameters)
        return function

    def args_text(self, indent: str = "    ", leave_out: Sequence[str] = ()) -> str:
        """Each option as a docstring's ``Args:`` entry, in the spec's order, indented by ``indent``."""
        import textwrap

        entries = [option.arg_text() for option in self.options if option.name not in leave_out]
        return textwrap.indent("\n".join(entries), indent)


class _OldFlag(argparse.Action):
    """A renamed option's old flag: still taken, for one version, with a warning on stderr (as
    argparse writes its errors); its value lands where the new flag's does."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        new_flag = "--" + self.dest.replace("_", "-")
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} is the old name of {new_flag}: give {new_flag} only")
        print(
            f"{parser.prog}: warning: {option_string} is now called {new_flag}; the old name is taken for "
            "this version only.",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_flags(
    parser: argparse.ArgumentParser, specs: Sequence[OptionSpec], default_texts: Mapping[str, str] = {}
) -> None:
    """One flag per option of ``specs``; an option several metrics take (same kind and default) gets
    one flag whose help says what it does in each. ``default_texts`` overrides what a help says of a
    default. Every flag defaults to None, so that the options given can be told apart. A renamed
    option's old flag is taken too, with a warning (:class:`_OldFlag`), left out of ``--help``."""
    for old, new in dict.fromkeys(pair for spec in specs for pair in spec.renamed):
        option = next(spec[new] for spec in specs if (old, new) in spec.renamed)
        parser.add_argument(
            "--" + old.replace("_", "-"),
            dest=new,
            action=_OldFlag,
            choices=option.choices or None,
            type=option.parse_flag if option.kind == "count" else None,
            help=argparse.SUPPRESS,
        )
    for name in dict.fromkeys(option.name for spec in specs for option in spec.command_line):
        holders = [spec for spec in specs if name in {option.name for option in spec.command_line}]
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


def given_flags(args: argparse.Namespace, spec: OptionSpec, loading: bool = False) -> dict[str, Any]:
    """The options of ``spec`` (its loading ones when ``loading``) given on the command line (a flag
    left at None is left to the metric)."""
    names = [option.name for option in spec.loading] if loading else spec.names
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def other_metrics_flags(args: argparse.Namespace, chosen: str, specs: Mapping[str, OptionSpec]) -> str | None:
    """Why the flags given are not all the ``chosen`` metric's, or None when they are: one rule for
    every flag, from the specs (a flag both metrics take is everyone's).

    >>> spec = OptionSpec("a", (), (Option("checkpoint", "model", None, "which"),))
    >>> other_metrics_flags(argparse.Namespace(checkpoint="x"), "b", {"a": spec, "b": OptionSpec("b", ())})
    '--checkpoint is an option of a, not of b: drop it, or score with --metric a'
    """
    mine = {option.name for option in specs[chosen].command_line}
    given: dict[str, str] = {}
    for metric, spec in specs.items():
        for option in spec.command_line:
            if option.name not in mine and getattr(args, option.name, None) is not None:
                given.setdefault(option.flag, metric)
    if not given:
        return None
    owners = sorted(set(given.values()))
    flags = ", ".join(given)
    if len(given) == 1:
        return f"{flags} is an option of {owners[0]}, not of {chosen}: drop it, or score with --metric {owners[0]}"
    return (
        f"{flags} are options of {' and '.join(owners)}, not of {chosen}: drop them, or score with "
        f"--metric {' / '.join(owners)}"
    )
