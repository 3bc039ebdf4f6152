"""Two example "systems" for ``story-quality compare``: held-back human ROC stories and corrupted copies.

    python -m benchmarks.compare_example --output-dir /tmp/compare-example --stories 100

writes ``human.txt`` (the first N held-back human ROC stories of ``benchmarks.dev_split``) and
``corrupted.txt`` (one corrupted copy of each, UNION's negative sampling as the development
suite makes its held-back pairs, seed 2026), line by line the same stories, ready for
``story-quality score`` and then ``story-quality compare``: the README's picture
(``benchmarks/results/compare_human_vs_corrupted.png``; the commands are in RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Sequence

from benchmarks.dev_sets import pair_set
from benchmarks.dev_split import roc_stories
from story_quality.cli.flag_spellings import ScriptParser


def main(argv: Sequence[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--output-dir", type=pathlib.Path, required=True, help="folder for the two .txt files"
    )
    parser.add_argument("--stories", type=int, default=100, help="held-back ROC stories to take (100)")
    args = parser.parse_args(argv)
    files = {name: args.output_dir / f"{name}.txt" for name in ("human", "corrupted")}
    taken = [path for path in files.values() if path.exists()]
    if taken:
        raise SystemExit(f"{taken[0]} exists; name another --output-dir (nothing was written)")
    pairs = pair_set("ROC held-back pairs", roc_stories()[1][: args.stories])
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for path, stories in ((files["human"], pairs.human), (files["corrupted"], pairs.corrupted)):
        path.write_text("".join(" ".join(story.split()) + "\n" for story in stories), encoding="utf-8")
    print(json.dumps({str(path): len(pairs.human) for path in files.values()}, indent=2))


if __name__ == "__main__":
    main()
