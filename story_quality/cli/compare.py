"""``story-quality compare``: compare systems' score files the way papers report them.

    story-quality compare a.jsonl b.jsonl --plot cmp.png
    story-quality compare all.jsonl --system-column system --id-column prompt_id --json
    story-quality compare a.jsonl b.jsonl --json cmp.json

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
intervals and distributions are shown beside the systems'. ``--json`` alone (or ``--json -``) prints
the comparison as JSON in place of the table; ``--json FILE`` writes it to FILE.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from story_quality.cli.errors import UsageError, refusal_message
from story_quality.cli.flag_spellings import subcommand
from story_quality.cli.json_report import add_json_flag, check_json_path, to_stdout, write_json
from story_quality.cli.plot import PLOT_EXTRA, PLOT_SOFTWARE, check_plot_path, plot_comparison
from story_quality.cli.resampling_flags import add_resampling_flags
from story_quality.evaluation import significance
from story_quality.evaluation.comparison import ID_COLUMN, Comparison, compare_files
from story_quality.registry import METRICS
from story_quality.score_file.rows import ScoreFileError

COMMAND = PLOT_SOFTWARE  # written into the JSON report and the picture: a rerun replaces its own

# The command's line in ``story-quality --help``.
SUMMARY = "compare systems' score files: intervals, paired significance tests, a picture"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``compare`` subcommand's parser, added to the ``story-quality`` command's subparsers."""
    parser = subcommand(commands, "compare", SUMMARY, __doc__)
    parser.add_argument(
        "inputs", nargs="+", type=pathlib.Path, help="outputs of story-quality score, one per system"
    )
    parser.add_argument("--system-column", help="one input whose rows name their system in this field")
    parser.add_argument(
        "--id-column", default=ID_COLUMN, help=f"field that matches rows across systems ({ID_COLUMN})"
    )
    parser.add_argument(
        "--score-column", help=f"field holding the score (default: the metric's, {' or '.join(METRICS)})"
    )
    add_resampling_flags(parser, "randomization trials")
    parser.add_argument(
        "--no-paired", dest="paired", action="store_false",
        help="skip the paired tests: each system's interval alone (systems may then hold different rows)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-unfinished", action="store_true",
        help="compare an output story-quality score is still writing or left short of its input (refused "
        "otherwise)",
    )  # fmt: skip
    add_json_flag(parser, "the comparison")
    parser.add_argument(
        "--plot", type=pathlib.Path, help=f"also draw the systems' scores into this .png ({PLOT_EXTRA})"
    )
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Nothing beyond argparse's own checks: the settings are checked (exit 2) when the command runs."""


def comparison_table(comparison: Comparison) -> str:
    """The comparison as text for people: each system's mean and interval, each pair's tests, notes."""
    level = f"{comparison.confidence:.0%}"
    lines = [
        f"signature: {comparison.signature}",
        f"{comparison.score_column}: mean and {level} bootstrap interval "
        f"({comparison.resamples} resamples, seed {comparison.seed})",
        "",
    ]
    rows = [*comparison.systems, *comparison.human]
    width = max(len("system"), *(len(s.name) for s in rows))
    lines.append(f"{'system':<{width}}  {'n':>6}  {'mean':>7}  {level} interval")
    for result in rows:
        interval = result.interval
        lines.append(
            f"{result.name:<{width}}  {result.n:>6}  {interval.estimate:>7.4f}  "
            f"[{interval.low:.4f}, {interval.high:.4f}]"
        )
    if comparison.human_table:
        lines.append(
            f"(held back: the human stories of the checkpoint's table, sha256:{comparison.human_table[:12]})"
        )
    if comparison.pairs:
        lines += [
            "",
            f"paired, on the same rows: difference b - a, its {level} interval, p-values "
            f"(the smallest {comparison.resamples} resamples can give is {1 / (comparison.resamples + 1):.4f})",
        ]
        for pair in comparison.pairs:
            test = pair.result
            difference = test.difference
            lines.append(
                f"{pair.b} - {pair.a}: {difference.estimate:+.4f} [{difference.low:+.4f}, "
                f"{difference.high:+.4f}], n {test.n}; p = {test.p_paired_bootstrap:.4f} "
                f"(paired bootstrap), {test.p_approximate_randomization:.4f} (approximate randomization)"
            )
    return "\n".join(lines + [f"note: {note}" for note in comparison.notes])


def run(args: argparse.Namespace) -> int:
    """Run ``story-quality compare``: 0; a refusal raises (one line and 2 from
    :func:`story_quality.cli.errors.run_and_report`). The comparison is printed (and its report
    written) before the picture is drawn, so a picture that cannot be written loses nothing else."""
    significance.check_command_settings(args.resamples, args.seed, args.confidence)
    check_json_path(args.json, args.inputs, COMMAND, args.plot)
    if args.plot is not None:
        check_plot_path(args.plot, args.inputs)
    comparison = compare_files(
        args.inputs, score_column=args.score_column, id_column=args.id_column, system_column=args.system_column,
        paired=args.paired, allow_unfinished=args.allow_unfinished, **significance.settings_of(args),
    )  # fmt: skip
    if not to_stdout(args.json):
        print(comparison_table(comparison), flush=True)
    if args.json is not None:
        write_json(comparison.to_dict(), args.json, COMMAND)
    if args.plot is None:
        return 0
    try:
        plot_comparison(comparison, args.plot)
    except ScoreFileError:
        raise
    except (OSError, ValueError) as error:
        raise UsageError(
            f"--plot {args.plot}: the picture could not be written ({refusal_message(error)}); the comparison "
            "is above"
        ) from None
    print(f"picture: {args.plot}", file=sys.stderr)
    return 0
