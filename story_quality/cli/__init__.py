"""The ``story-quality`` command: one module per subcommand, as COMET's ``cli/``.

    story-quality score --metric union --input stories.txt --output scores.jsonl
    story-quality compare a.jsonl b.jsonl --plot cmp.png
    story-quality publish-metric union --repo-id you/union --output space/

``score`` scores a file of texts with union or gruen, on one process or many
(:mod:`story_quality.cli.score`); ``compare`` compares systems' score files with intervals and
paired significance tests (:mod:`story_quality.cli.compare`); ``publish-metric`` stages a
metric's folder as a Hugging Face Space (:mod:`story_quality.cli.publish_metric`). Each
command's ``--help`` says the rest. Building the parser imports neither torch nor transformers:
``--help`` and ``compare`` start in a fraction of a second.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from story_quality.cli import compare, publish_metric, score

COMMANDS = {"score": score, "compare": compare, "publish-metric": publish_metric}


def parser() -> argparse.ArgumentParser:
    """The root parser with one subparser per command."""
    root = argparse.ArgumentParser(
        prog="story-quality", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = root.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.add_parser(commands)
    return root


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, parsed and checked by the chosen command's own rules."""
    root = parser()
    args = root.parse_args(argv)
    COMMANDS[args.command].check_args(root, args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
