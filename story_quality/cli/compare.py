"""``story-quality compare``: compare systems' score files the way papers report them.

    story-quality compare a.jsonl b.jsonl --plot cmp.png
    story-quality compare all.jsonl --system-column system --id-column prompt_id --json

Each input is an output of ``story-quality score`` (one per system), or one file whose rows name
their system (``--system-column``). For every system: the number of scored rows, the mean and
its bootstrap confidence interval; for every pair of systems on the same rows: the mean
difference, its interval, and the p-values of paired bootstrap resampling (Koehn, 2004; its
p-value tests the null shifted to 0, unlike sacrebleu's) and of approximate randomization
(Riezler and Maxwell, 2005). Rows are matched by their ``index`` (or ``--id-column``), never by
position.

It reads only what it can vouch for, and refuses, naming the file (and line): files of different
signatures (the human-scale table included when percentiles are compared); systems of different
rows when a paired test is asked for; a row edited after ``score`` sealed it, or a row without
its seal in a file whose rows carry one; an output still being written or with fewer rows than
its input had (``--allow-unfinished`` reads it anyway); the same file twice; a score outside the
metric's range; a score column that is a row's identity; a row id or system name that is not a
string or a number. For a checkpoint that ships a human scale table, its held-back human stories'
intervals and distributions are shown beside the systems'.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from story_quality.cli.errors import UsageError, refusal_message
from story_quality.cli.plot import PLOT_EXTRA, check_plot_path, plot_comparison
from story_quality.evaluation import significance
from story_quality.evaluation.comparison import ID_COLUMN, CompareError, check_settings, compare_files


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``compare`` subcommand's parser, added to the ``story-quality`` command's subparsers."""
    parser = commands.add_parser(
        "compare",
        help="compare systems' score files: intervals, paired significance tests, a picture",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "inputs", nargs="+", type=pathlib.Path, help="outputs of story-quality score, one per system"
    )
    parser.add_argument("--system-column", help="one input whose rows name their system in this field")
    parser.add_argument(
        "--id-column", default=ID_COLUMN, help=f"field that matches rows across systems ({ID_COLUMN})"
    )
    parser.add_argument(
        "--score-column", help="field holding the score (default: the metric's, union or gruen)"
    )
    parser.add_argument(
        "--resamples", type=int, default=significance.DEFAULT_RESAMPLES,
        help=f"bootstrap resamples and randomization trials ({significance.DEFAULT_RESAMPLES})",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling (0)")
    parser.add_argument(
        "--confidence", type=float, default=significance.DEFAULT_CONFIDENCE, help="interval level (0.95)"
    )
    parser.add_argument(
        "--no-paired", dest="paired", action="store_false",
        help="skip the paired tests: each system's interval alone (systems may then hold different rows)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-unfinished", action="store_true",
        help="compare an output story-quality score is still writing or left short of its input (refused "
        "otherwise)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON, for machines")
    parser.add_argument(
        "--plot", type=pathlib.Path, help=f"also draw the systems' scores into this .png ({PLOT_EXTRA})"
    )
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Nothing beyond argparse's own checks: the settings are checked (exit 2) when the command runs."""


def run(args: argparse.Namespace) -> int:
    """Run ``story-quality compare``: 0; a refusal raises (one line and 2 from
    :func:`story_quality.cli.errors.run_and_report`). The comparison is printed before the picture
    is drawn, so a picture that cannot be written loses nothing else."""
    check_settings(args.resamples, args.seed, args.confidence)
    if args.plot is not None:
        check_plot_path(args.plot, args.inputs)
    comparison = compare_files(
        args.inputs, args.score_column, args.id_column, args.system_column,
        args.resamples, args.seed, args.confidence, args.paired, args.allow_unfinished,
    )  # fmt: skip
    print(json.dumps(comparison.to_dict(), indent=2) if args.json else comparison.table(), flush=True)
    if args.plot is None:
        return 0
    try:
        plot_comparison(comparison, args.plot)
    except CompareError:
        raise
    except (OSError, ValueError) as error:
        raise UsageError(
            f"--plot {args.plot}: the picture could not be written ({refusal_message(error)}); the comparison "
            "is above"
        ) from None
    print(f"picture: {args.plot}", file=sys.stderr)
    return 0
