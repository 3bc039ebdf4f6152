"""Fluent negatives: a share of a built corpus's corrupted copies replaced by stories that read well
and lose the thread (nearest-neighbour sentences of other stories, a similar story's ending, a near
but wrong prompt), each story keeping the candidates a UNION checkpoint rates most human-written:

    MINILM=$(python -c "from benchmarks.machine import minilm_path; print(minilm_path())")
    python training/fluent_negatives.py outputs/union-pairs outputs/union-pairs-fluent \\
        --encoder "$MINILM" --fraction 0.5 --cache-dir outputs/embedding-cache

The sentence embeddings (frozen, of ``--encoder``) are computed once and kept in ``--cache-dir``
under their sha256. Copies already replaced by another kind of generated negative
(``generated_negatives.py replace``, ``build_union_data.py --ngram-fraction``) are kept; run this
after them. The summary (``fluent_negatives_summary.json``) records the candidates per kind, how
often the filtering checkpoint already rated the human story higher, and the rows' sha256.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Sequence

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.devices import check_device
from story_quality.training.cli_types import at_least
from story_quality.training.negatives.fluent_candidates import KINDS, FluentOptions
from story_quality.training.negatives.fluent_corpus import FilterSettings, make_fluent_corpus


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "corpus", type=pathlib.Path, help="a corpus written by build_union_data.py (or replace)"
    )
    parser.add_argument("output_dir", type=pathlib.Path, help="a new or empty folder for the new corpus")
    parser.add_argument(
        "--encoder", type=pathlib.Path, required=True, help="sentence encoder folder (the pretrained MiniLM)"
    )
    parser.add_argument(
        "--fraction",
        type=float,
        default=0.5,
        help="share of the edited corrupted copies replaced (default: 0.5)",
    )
    parser.add_argument("--seed", type=int, default=9, help="candidates and replaced copies (default: 9)")
    parser.add_argument(
        "--neighbours",
        type=at_least(1),
        default=5,
        help="nearest sentences or openings drawn among (default: 5)",
    )
    parser.add_argument("--draws", type=at_least(1), default=2, help="candidates of each kind (default: 2)")
    parser.add_argument("--keep", type=at_least(1), default=2, help="candidates a story keeps (default: 2)")
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help=f"candidate kinds, comma-separated (default: {','.join(KINDS)})",
    )
    parser.add_argument(
        "--scorer",
        default="default",
        help="UNION checkpoint that filters the candidates (default: the shipped one)",
    )
    parser.add_argument(
        "--max-length", type=at_least(1), default=256, help="word pieces read a row (default: 256)"
    )
    parser.add_argument("--batch-size", type=at_least(1), default=64, help="scoring batch size (default: 64)")
    parser.add_argument("--device", default="cpu", help="torch device to embed and score on (default: cpu)")
    parser.add_argument(
        "--cache-dir", type=pathlib.Path, help="where sentence embeddings are kept between runs"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier output of this tool")
    args = parser.parse_args(argv)
    try:
        check_device(args.device)
        kinds = tuple(filter(None, args.kinds.split(",")))
        options = FluentOptions(args.neighbours, args.keep, kinds, args.draws)
        summary = make_fluent_corpus(
            args.corpus,
            args.output_dir,
            args.encoder,
            fraction=args.fraction,
            seed=args.seed,
            options=options,
            scoring=FilterSettings(args.scorer, args.max_length, args.batch_size, args.device),
            cache_dir=args.cache_dir,
            overwrite=args.overwrite,
        )
    except (OSError, ValueError) as error:  # the user's to fix: a usage error naming the folder or option
        parser.error(str(error))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
