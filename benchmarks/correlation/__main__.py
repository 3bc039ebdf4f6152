"""CLI: correlate metric scores with UNION-format human judgements and write the tables and figures.

Example (the published ROC metrics, as in the README)::

    python -m benchmarks.correlation ant_data.txt --error-types ant_data_all.txt \\
        --published metric_output/ --output-dir benchmarks/results

Add a new metric with ``--metric "my union=scores.txt"`` (``:lower`` for lower-is-better scores).
"""

from __future__ import annotations

import argparse
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import scipy

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.evaluation.annotations import AnnotationFormatError, read_annotations, read_scores

from .analysis import evaluate_scores
from .report import to_markdown, write_biased_png, write_json, write_scatter_png
from .robustness import BIASED_SET_REPEATS, ERROR_TYPE_MIN_ANNOTATORS

ORIENTATIONS = {"lower": True, "higher": False}


def parse_metric_spec(spec: str) -> tuple[str, Path, bool]:
    """``name=path[:lower|:higher]`` -> (name, path, lower_is_better)."""
    name, separator, rest = spec.partition("=")
    if not separator or not name.strip() or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH[:lower|:higher], got {spec!r}")
    lower = False
    head, colon, suffix = rest.rpartition(":")
    if colon and suffix in ORIENTATIONS:
        rest, lower = head, ORIENTATIONS[suffix]
    return name.strip(), Path(rest), lower


def machine_description() -> str:
    """The shared benchmark machine line plus the library versions the statistics come from."""
    from benchmarks.machine import describe_machine  # imports torch: only when a report is written

    return f"{describe_machine()}; Python {platform.python_version()}, NumPy {np.__version__}, SciPy {scipy.__version__}"


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(
        prog="python -m benchmarks.correlation",
        description=(
            "Correlate metric scores with human judgements in UNION's format (ID ||| story ||| 0/1 votes): "
            "Pearson, Spearman and Kendall with p-values, Williams tests between metrics, and the two "
            "robustness views of UNION's paper (8 biased test sets: Figure 2; error-type sets: Table 7, with "
            "their sizes). Writes "
            "PREFIX.md, PREFIX.json, PREFIX_scatter.png and PREFIX_biased.png into --output-dir."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "annotations", type=Path, help="annotation file: 'ID ||| story ||| v1 ... v7' per line"
    )
    parser.add_argument(
        "--error-types",
        type=Path,
        help="the matching file with each annotator's error code (0-5), e.g. ant_data_all.txt; enables the "
        f"per-error-type table (a story has a type when at least {ERROR_TYPE_MIN_ANNOTATORS} annotators gave its code)",
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        type=parse_metric_spec,
        metavar="NAME=PATH[:lower]",
        help="a metric's scores, one per line (or a .json list) aligned with the annotation file; "
        "append ':lower' when lower is better (it is negated and shown as -NAME); repeatable",
    )
    parser.add_argument(
        "--published",
        type=Path,
        help="UNION's metric_output/ directory: adds UNION, UNION w/o reconstruction, BLEURT, -Perplexity, "
        "MoverScore, BLEU, RUBER-BERT and DisScore to the table",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=Path("benchmarks/results"), help="where the files go"
    )
    parser.add_argument("--prefix", default="correlation", help="file name prefix of the outputs")
    parser.add_argument(
        "--reference",
        help="metric every other one is Williams-tested against (default: first --metric, else UNION)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the biased-set sampler")
    parser.add_argument(
        "--biased-repeats",
        type=int,
        default=BIASED_SET_REPEATS,
        help="seeded draws per biased set (each story kept with probability 1/(|I-k|+1) in set I)",
    )
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG figures (no matplotlib needed)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.metric and args.published is None:
        parser.error("give at least one --metric or the --published directory")
    started = time.perf_counter()
    try:
        annotations = read_annotations(args.annotations, args.error_types)
        scores = {}
        lower = set()
        for name, path, is_lower in args.metric:
            if name in scores:
                parser.error(f"metric name {name!r} given twice")
            scores[name] = read_scores(path, len(annotations))
            if is_lower:
                lower.add(name)
        report = evaluate_scores(
            annotations,
            scores,
            lower_is_better=lower,
            published_dir=args.published,
            reference=args.reference,
            biased_repeats=args.biased_repeats,
            seed=args.seed,
        )
    except (AnnotationFormatError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    command = "python -m benchmarks.correlation " + shlex.join(sys.argv[1:] if argv is None else argv)
    preamble = [f"Command: `{command}`", "", f"Machine: {machine_description()}", ""]
    markdown = to_markdown(report, preamble)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    written = [args.output_dir / f"{args.prefix}.md"]
    written[0].write_text(markdown, encoding="utf-8")
    written.append(write_json(report, args.output_dir / f"{args.prefix}.json"))
    if not args.no_plots:
        written.append(write_scatter_png(report, args.output_dir / f"{args.prefix}_scatter.png"))
        if report.biased:
            written.append(write_biased_png(report, args.output_dir / f"{args.prefix}_biased.png"))
    print(markdown)
    print(f"wrote {', '.join(str(path) for path in written)} in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
