"""The option tables of the metric cards, generated from each metric's option spec.

    python -m story_quality.cli.option_tables            # rewrites the tables in metrics/*/README.md
    python -m story_quality.cli.option_tables --check    # exits 1 when a card's table is not the spec's

The specs live with their metrics (``story_quality.union.options``, ``story_quality.gruen.options``)
and read :mod:`story_quality.options`; this tool reads them all, so nothing the metrics import
imports it.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

from story_quality import metric_path
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.options import OptionSpec
from story_quality.registry import option_specs

TABLE_START = (
    "<!-- options: generated from the option spec by `python -m story_quality.cli.option_tables` -->"
)
TABLE_END = "<!-- /options -->"


def specs() -> dict[str, OptionSpec]:
    """Each metric's option spec, by the metric's name (:func:`story_quality.registry.option_specs`)."""
    return option_specs()


def markdown_table(spec: OptionSpec) -> str:
    """A card's option table, between its markers."""
    rows = [
        f"| `{option.name}` | {option.type_text()} | {option.table_default()} | {option.help} |"
        for option in spec.options
    ]
    return "\n".join(
        [TABLE_START, "| option | type | default | what it does |", "|---|---|---|---|", *rows, TABLE_END]
    )


def with_table(card: str, table: str, where: str) -> str:
    """``card`` with the text between its option-table markers replaced by ``table``."""
    start, end = card.find(TABLE_START), card.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"{where} has no option table markers ({TABLE_START} ... {TABLE_END})")
    return card[:start] + table + card[end + len(TABLE_END) :]


def card_path(metric: str) -> pathlib.Path:
    """The metric card (``README.md`` of the metric's folder)."""
    return pathlib.Path(metric_path(metric)) / "README.md"


def main(argv: Sequence[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only say whether every card's table is current")
    args = parser.parse_args(argv)
    stale = []
    for metric, spec in specs().items():
        path = card_path(metric)
        try:  # a card that cannot be read or has no markers is an error (2), not "out of date" (1)
            card = path.read_text(encoding="utf-8")
            current = with_table(card, markdown_table(spec), str(path))
        except (OSError, ValueError) as error:
            parser.error(str(error))
        if current != card:
            stale.append(str(path))
            if not args.check:
                path.write_text(current, encoding="utf-8")
    if stale:
        print(("out of date: " if args.check else "rewrote: ") + ", ".join(stale), file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
