"""Do negatives that lose the thread teach UNION to rank generated stories? A pilot corpus.

UNION's corruptions (repetition, substitution, reordering, negation) edit a human story in
place. A generated story more often starts well and then drifts into another story. This study
takes a corpus written by ``training/build_union_data.py`` and, for a share of its stories,
replaces the corrupted copy with a *splice*: the story's first half (at least two sentences),
then the second half of another story of the same kind (WritingPrompts texts with
WritingPrompts texts, ROC stories with ROC stories), cut to the original's length in words.
Human rows, labels and the corpus's recorded normalisation are kept, so ``train_union.py``
trains on the result as on any built corpus.

    python -m experiments.union_splice_negatives outputs/data/mix-seg2 outputs/data/mix-seg2-splice
"""

from __future__ import annotations

import argparse
import pathlib
import random
import re

import datasets

from story_quality.cli.flag_spellings import ScriptParser

SENTENCE_END = re.compile(r"(?<= [.!?]) ")
LONG_TEXT_WORDS = 80  # ROC stories are about 45 words, WritingPrompts texts about 200


def sentences_of(text: str) -> list[str]:
    """A normalised text's sentences (PTB tokens: a sentence ends with a spaced ``.``, ``?`` or ``!``).

    >>> sentences_of("he ran . she sat ! why ?")
    ['he ran .', 'she sat !', 'why ?']
    """
    return [part for part in SENTENCE_END.split(text.strip()) if part]


def splice(story: list[str], donor: list[str]) -> str:
    """``story``'s first half (two sentences at least), then ``donor``'s second half, cut to
    ``story``'s length in words (whole sentences, one at least).

    >>> splice(["a b .", "c d .", "e f .", "g h ."], ["w .", "x .", "y y .", "z z ."])
    'a b . c d . y y . z z .'
    """
    keep = max(2, len(story) // 2)
    budget = sum(len(s.split()) for s in story[keep:])
    tail: list[str] = []
    used = 0
    for sentence in donor[len(donor) // 2 :]:
        words = len(sentence.split())
        if tail and used + words > budget:
            break
        tail.append(sentence)
        used += words
    return " ".join(story[:keep] + tail)


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=pathlib.Path, help="a corpus folder written by build_union_data.py")
    parser.add_argument("output_dir", type=pathlib.Path)
    parser.add_argument(
        "--fraction", type=float, default=1 / 3, help="share of stories spliced (default: 1/3)"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    corpus = datasets.load_from_disk(str(args.corpus))
    human = {row["story_index"]: row["text"] for row in corpus if row["label"] == 1}
    rng = random.Random(args.seed)
    pools: dict[bool, list[int]] = {True: [], False: []}
    for index, text in human.items():
        pools[len(text.split()) > LONG_TEXT_WORDS].append(index)
    chosen = {index for index in human if rng.random() < args.fraction}
    spliced: dict[int, str] = {}
    for index in sorted(chosen):
        story = sentences_of(human[index])
        pool = pools[len(human[index].split()) > LONG_TEXT_WORDS]
        donor = index
        while donor == index:
            donor = rng.choice(pool)
        if len(story) >= 3:
            spliced[index] = splice(story, sentences_of(human[donor]))

    def replace(row: dict) -> dict:
        if row["label"] == 0 and row["story_index"] in spliced:
            row["text"], row["corruptions"] = spliced[row["story_index"]], ["splice"]
        return row

    corpus.map(replace, desc="Splicing").save_to_disk(str(args.output_dir))
    print(f"{len(spliced)} of {len(human)} corrupted copies replaced by splices -> {args.output_dir}")


if __name__ == "__main__":
    main()
