"""The ``story-quality`` command: one module per subcommand, as COMET's ``cli/``.

``score`` (:mod:`story_quality.cli.score`) scores a file of texts with union or gruen, on one
process or many; ``compare`` (:mod:`story_quality.cli.compare`, its picture in
:mod:`story_quality.cli.plot`) compares systems' score files; ``meta-evaluate``
(:mod:`story_quality.cli.meta_evaluate`, its table in :mod:`story_quality.cli.meta_report`, its
picture in :mod:`story_quality.cli.meta_plot`) measures how well metrics agree with human ratings;
both write their JSON report by ``--json [FILE|-]`` (:mod:`story_quality.cli.json_report`); ``publish-metric``
(:mod:`story_quality.cli.publish_metric`) stages a metric's folder as a Hugging Face Space; their
refusals are reported alike, by the one handler of :mod:`story_quality.cli.errors` (one line,
exit status 2). Each command module has
``add_parser``, ``check_args`` and ``run``. Building the parsers imports neither torch nor
transformers (``tests/test_import_direction.py``), so ``--help``, ``compare`` and ``meta-evaluate`` start in
well under a second.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from story_quality.cli import compare, meta_evaluate, publish_metric, score
from story_quality.cli.errors import run_and_report
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.versions import package_version

COMMANDS = {
    "score": score,
    "compare": compare,
    "meta-evaluate": meta_evaluate,
    "publish-metric": publish_metric,
}
DESCRIPTION = """\
Score stories with UNION (coherence) or GRUEN (linguistic quality), compare systems, and measure
how well a metric agrees with your own ratings.

  story-quality score --metric union --input stories.txt --output scores.jsonl
  story-quality compare a.jsonl b.jsonl --plot cmp.png
  story-quality meta-evaluate ratings.jsonl union.jsonl gruen.jsonl --json meta.json
  story-quality publish-metric union --repo-id ORG/NAME --output space/

Each command's --help says the rest; --version prints this package's version.
"""


def parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The root parser, and each command's parser by the command's name."""
    root = ScriptParser(
        prog="story-quality", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    root.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = root.add_subparsers(dest="command", required=True)
    return root, {name: command.add_parser(commands) for name, command in COMMANDS.items()}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, parsed and checked by the chosen command's own rules (its usage errors name it)."""
    root, by_name = parsers()
    args = root.parse_args(argv)
    COMMANDS[args.command].check_args(by_name[args.command], args)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line: its command's exit status; every refusal one line on standard error and 2."""
    args = parse_args(argv)
    return run_and_report(f"story-quality {args.command}", lambda: COMMANDS[args.command].run(args))


if __name__ == "__main__":
    sys.exit(main())
