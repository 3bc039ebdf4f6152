"""``story-quality meta-evaluate``: how well do metrics agree with *your* raters?

    story-quality meta-evaluate ratings.jsonl union.jsonl gruen.jsonl --json meta.json --plot meta.png
    story-quality meta-evaluate ratings.jsonl union.jsonl --json     (the report printed, as JSON)

RATINGS is a JSONL, JSON or CSV file with a text and a rating a row (the column --rating-column,
human by default): one number, or a list of numbers, one per rater (null where a rater gave none);
optionally an id, a system (generator) and a group (prompt) column. Each SCORES file is an output
of ``story-quality score --input RATINGS`` (matched row by row by its index, every row's text
hash checked against the rated text) or any JSON lines file with the ratings' id and a score
(--score-column). Anything that does not match is refused, naming the file and line.

For each metric, with a bootstrap interval (resampling the stories, or the groups when there are
groups, and the systems when there are systems): Pearson, Spearman and Kendall over all stories;
the mean of the per-system correlations (within-system) and the correlation of the systems'
means (system-level); Kendall inside each group, averaged (as HANNA reports it); Pearson once
every system's and group's mean is removed (residual); the share of story pairs ordered as the
raters order them, raw and with ties calibrated (Deutsch et al., 2023, as mt-metrics-eval). The
same figures for baselines that need no model (length, distinct 3-grams, and oracles that score
a story with its system's or group's mean rating) and, when ratings are lists, for the raters
themselves (each against the others' mean: the ceiling, the agreement of one more rater).
Between two metrics: each figure's difference with its interval and the p-value of a paired
permutation test (PERM-BOTH; Williams' test too for pooled Pearson); with more than two, the
groups of metrics the tests cannot tell apart. A story without a rating, or that a score file
skipped, is left out of every figure, and counted.
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys

from story_quality.cli.errors import UsageError, refusal_message
from story_quality.cli.flag_spellings import subcommand
from story_quality.cli.json_report import add_json_flag, check_json_path, to_stdout, write_json
from story_quality.cli.meta_report import evaluation_table
from story_quality.cli.plot import PLOT_EXTRA, check_plot_path
from story_quality.cli.resampling_flags import add_resampling_flags
from story_quality.evaluation import significance
from story_quality.evaluation.meta_results import MetaEvaluation
from story_quality.score_file.rows import ScoreFileError

# Written into every JSON report file and every picture, so that a rerun may replace its own
# report and picture and nothing else.
COMMAND = "story-quality meta-evaluate"

# The command's line in ``story-quality --help``.
SUMMARY = "how well metrics agree with your human ratings: correlations at every level, tests, a picture"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``meta-evaluate`` subcommand's parser, added to the ``story-quality`` command's subparsers."""
    parser = subcommand(commands, "meta-evaluate", SUMMARY, __doc__)
    parser.add_argument("ratings", type=pathlib.Path, help="the rated stories (.jsonl, .json or .csv)")
    parser.add_argument("scores", nargs="+", type=pathlib.Path, help="one score file per metric")
    parser.add_argument(
        "--rating-column", default="human", help="field holding the rating or the raters' list (human)"
    )
    parser.add_argument("--text-column", default="text", help="field holding the story (text)")
    parser.add_argument(
        "--id-column", help="field naming each story, matched in the score files (id, if present)"
    )
    parser.add_argument("--system-column", help="field naming each story's system (system, if present)")
    parser.add_argument(
        "--group-column", help="field naming each story's prompt or group (group, if present)"
    )
    parser.add_argument(
        "--score-column", help="field holding the score (default: the metric the signature names)"
    )
    add_resampling_flags(parser, "permutation trials")
    add_json_flag(parser, "every figure, interval and n")
    parser.add_argument(
        "--plot",
        type=pathlib.Path,
        metavar="FILE.png",
        help=f"also draw each metric against the ratings into this .png ({PLOT_EXTRA})",
    )
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Nothing beyond argparse's own checks: the settings are checked (exit 2) when the command runs."""


def _check_outputs(args: argparse.Namespace) -> None:
    inputs = [args.ratings, *args.scores]
    check_json_path(args.json, inputs, COMMAND, args.plot)
    if args.plot is not None:
        check_plot_path(args.plot, inputs, software=COMMAND)


def _evaluate(args: argparse.Namespace) -> MetaEvaluation:
    from tqdm.auto import tqdm

    from story_quality.evaluation.meta_evaluation import meta_evaluate_files

    required = [name for name in ("id", "system", "group") if getattr(args, f"{name}_column") is not None]
    bar = functools.partial(tqdm, desc="meta-evaluate", unit="resample", leave=False)
    return meta_evaluate_files(
        args.ratings, args.scores, args.rating_column, args.text_column, args.id_column or "id",
        args.system_column or "system", args.group_column or "group", args.score_column,
        args.resamples, args.seed, args.confidence, required, progress=bar,
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run ``story-quality meta-evaluate``: 0; a refusal raises (one line and 2 from
    :func:`story_quality.cli.errors.run_and_report`). The table (or the JSON report) is printed before
    the report and the picture are written, so a failed write loses nothing else."""
    significance.check_command_settings(args.resamples, args.seed, args.confidence)
    _check_outputs(args)
    evaluation = _evaluate(args)
    if not to_stdout(args.json):
        print(evaluation_table(evaluation), flush=True)
    try:
        if args.json is not None:
            write_json(evaluation.to_dict(), args.json, COMMAND)
        if args.plot is not None:
            from story_quality.cli.meta_plot import plot_meta_evaluation

            plot_meta_evaluation(evaluation, args.plot, software=COMMAND)
            print(f"picture: {args.plot}", file=sys.stderr)
    except ScoreFileError:
        raise
    except (OSError, ValueError) as error:
        raise UsageError(
            f"the report or picture could not be written ({refusal_message(error)}); the table is above"
        ) from None
    return 0
