"""How close the ``roc`` normalisation comes to UNION's own text, on stories seen both ways.

``union-roc/normalization_pairs.tsv`` holds 216 stories raw and as UNION's release normalised
them (lowercased, PTB tokens, names replaced by its unpublished tagger). Prints the share our
``roc`` normalisation reproduces exactly, the share whose tokenisation alone is exact (names
compared as "some tag or not"), every token that differs, and the tags per story on a raw corpus
beside UNION's own references, where no pair exists (an out-of-sample check of the tagger), and
the share of raw stories whose lowercased copy normalises to the same text (names in lowercased
text, read without capitals):

    python -m benchmarks.union_normalization_pairs [--corpus roc-stories/stories.txt]
"""

from __future__ import annotations

import argparse
import collections
import csv
import pathlib

from benchmarks.shared_data import shared_data
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.union.normalization import PLACEHOLDERS, ROC_STORIES, StoryNormalization

TOKENS_ONLY = StoryNormalization(lowercase=True, roc_tokenize=True)


def read_pairs(path: pathlib.Path) -> list[tuple[str, str]]:
    with path.open(newline="") as f:
        return [
            (r["raw_story"], r["union_text"])
            for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        ]


def tokens_agree(ours: str, theirs: str) -> bool:
    """Same tokens once any name tag and any word in its place are treated as equal."""
    a, b = ours.split(), theirs.split()
    return len(a) == len(b) and all(
        x == y or x in PLACEHOLDERS or y in PLACEHOLDERS for x, y in zip(a, b, strict=True)
    )


def tags_per_story(stories: list[str]) -> dict[str, float]:
    counts = collections.Counter(tok for s in stories for tok in s.split() if tok in PLACEHOLDERS)
    return {tag: counts[tag] / len(stories) for tag in PLACEHOLDERS}


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--pairs", type=pathlib.Path, default=None, help="default: union-roc/normalization_pairs.tsv"
    )
    parser.add_argument("--corpus", type=pathlib.Path, default=None, help="default: roc-stories/stories.txt")
    args = parser.parse_args()
    pairs = read_pairs(args.pairs or shared_data("union-roc", "normalization_pairs.tsv"))

    exact = tokenised = 0
    differences: collections.Counter = collections.Counter()
    for raw, theirs in pairs:
        ours = ROC_STORIES(raw)
        exact += ours == theirs
        tokenised += tokens_agree(TOKENS_ONLY(raw), theirs)
        a, b = ours.split(), theirs.split()
        if ours == theirs:
            continue
        if len(a) == len(b):
            differences.update((x, y) for x, y in zip(a, b, strict=True) if x != y)
        else:
            differences[("<token count>", f"{len(a)} vs {len(b)}")] += 1
    n = len(pairs)
    print(f"stories: {n}")
    print(f"exact match with UNION's text: {exact}/{n} = {exact / n:.1%}")
    print(f"tokenisation exact (names aside): {tokenised}/{n} = {tokenised / n:.1%}")
    for (ours, theirs), count in differences.most_common():
        print(f"  {count:3d}  ours {ours!r:14} UNION {theirs!r}")

    corpus = args.corpus or shared_data("roc-stories", "stories.txt")
    raw_stories = [line for line in corpus.read_text().splitlines() if line.strip()]
    references = [
        line for line in shared_data("union-roc", "reference.txt").read_text().splitlines() if line.strip()
    ]
    ours_rates = tags_per_story([ROC_STORIES(s) for s in raw_stories])
    union_rates = tags_per_story(references)
    same = sum(ROC_STORIES(s) == ROC_STORIES(s.lower()) for s in raw_stories)
    print(
        f"\nraw and lowercased copies normalised alike: {same}/{len(raw_stories)} = {same / len(raw_stories):.1%}"
    )
    print(
        f"\ntags per story: ours on {corpus.name} ({len(raw_stories)}) | UNION on its references ({len(references)})"
    )
    for tag in PLACEHOLDERS:
        print(f"  {tag:10} {ours_rates[tag]:.3f} | {union_rates[tag]:.3f}")


if __name__ == "__main__":
    main()
