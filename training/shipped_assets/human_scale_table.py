"""A shipped UNION checkpoint's human scale: its scores of the held-back human stories, in a pinned table.

    python -m benchmarks.dev_split --output-dir outputs/corpora
    python training/shipped_assets/human_scale_table.py outputs/corpora --checkpoint default

Scores, through the ``union`` metric with the checkpoint's own settings, the human stories that
``benchmarks.dev_split`` holds back from every training corpus, read from the two files its
command writes into the folder given here:

- ``roc`` (``roc_heldback.txt``): every 50th story of ``roc-stories/stories.txt`` (461 stories);
- ``wp`` (``wp_heldback.jsonl``): every 10th story of ``wp-stories/stories.jsonl``, as UNION's WP
  data has them and as the development suite builds its WP pairs: the prompt, then about 200
  words of the story (``writing_prompts_text``; 365 stories),

and writes them to ``story_quality/union/human_scale_tables/<name>.json``, the table behind
``percentiles="human-roc"`` / ``"human-wp"`` and the human rows of ``story-quality compare``
(``story_quality.union.human_scale``). It prints the table's sha256: pin it in ``TABLES`` of
``story_quality/union/human_scale.py``, which refuses a table whose sha256 is not the pinned one.
When the shipped default changes (``shipped_default.py`` here), these two commands and that pin
rebuild its human scale.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

from story_quality.checkpoints.files import weights_sha256  # noqa: E402
from story_quality.checkpoints.reference import CheckpointReference  # noqa: E402
from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training.corpora import writing_prompts_text  # noqa: E402
from story_quality.union import human_scale  # noqa: E402
from story_quality.union.scorer import scorer_for  # noqa: E402

# The held-back stories of each domain: the file benchmarks.dev_split writes them to, and what the
# table says of them (written into the table, so kept word for word).
HELD_BACK_FILES = {"roc": "roc_heldback.txt", "wp": "wp_heldback.jsonl"}
DOMAINS = {
    "roc": "the held-back human ROCStories stories of benchmarks.dev_split (every 50th of stories.txt)",
    "wp": "the held-back human WritingPrompts stories of benchmarks.dev_split (every 10th of stories.jsonl): "
    "the prompt, then about 200 words (writing_prompts_text)",
}
# The command a table records: from the shared data to the table, with no path of this machine.
COMMAND = (
    "python -m benchmarks.dev_split --output-dir CORPORA && "
    "python training/shipped_assets/human_scale_table.py CORPORA --checkpoint {checkpoint}"
)


def human_stories(folder: pathlib.Path) -> dict[str, list[str]]:
    """The held-back human stories of each domain, in the order of ``folder``'s held-back files."""
    missing = [name for name in HELD_BACK_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise SystemExit(
            f"{folder} holds no {' or '.join(missing)}; write the held-back stories there first with "
            f"python -m benchmarks.dev_split --output-dir {folder}"
        )
    roc = (folder / HELD_BACK_FILES["roc"]).read_text(encoding="utf-8").splitlines()
    with (folder / HELD_BACK_FILES["wp"]).open(encoding="utf-8") as source:
        rows = [json.loads(line) for line in source if line.strip()]
    wp = [writing_prompts_text(row["prompt"], row["story"]) for row in rows]
    return {"roc": [story for story in roc if story.strip()], "wp": [text for text in wp if text]}


def check_output(path: pathlib.Path) -> None:
    """Replace only a table this command wrote (a JSON object with ``checkpoint`` and ``domains``)."""
    if not path.parent.is_dir():
        raise SystemExit(f"--output {path}: the folder {path.parent} does not exist")
    if path.exists():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            record = None
        if not isinstance(record, dict) or not {"checkpoint", "domains"} <= record.keys():
            raise SystemExit(f"--output {path} exists and is not a human scale table; it is left alone")


def build_parser() -> argparse.ArgumentParser:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "held_back",
        type=pathlib.Path,
        help="the folder python -m benchmarks.dev_split --output-dir wrote (its "
        f"{' and '.join(HELD_BACK_FILES.values())})",
    )
    parser.add_argument(
        "--checkpoint", default="default", help="the metric's config name or a checkpoint folder (default)"
    )
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        help="the table file (default: human_scale_tables/NAME.json in the package)",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="scoring batch size (32)")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    name = pathlib.Path(args.checkpoint).name
    output = args.output or human_scale.TABLE_FOLDER / f"{name}.json"
    check_output(output)
    started = time.perf_counter()
    stories = human_stories(args.held_back)
    scorer = scorer_for(args.checkpoint)
    results = {
        domain: scorer.score(texts, batch_size=args.batch_size).as_dict() for domain, texts in stories.items()
    }
    signature = results["roc"]["signature"]
    checkpoint = scorer.checkpoint
    sha = human_scale.write_table(
        output,
        signature,
        weights_sha256(checkpoint.source) if checkpoint.local else None,
        {domain: (DOMAINS[domain], result["scores"]) for domain, result in results.items()},
        COMMAND.format(checkpoint=args.checkpoint),
    )
    label = CheckpointReference.name_in_label(human_scale.checkpoint_label(signature))
    means = ", ".join(
        f"{d} {len(r['scores'])} stories, mean {r['union_score']:.4f}" for d, r in results.items()
    )
    print(f"{output}: {means}; {time.perf_counter() - started:.0f} s")
    print(f"signature {signature}")
    print(f'pin it in story_quality/union/human_scale.py TABLES: "{label}": sha256 {sha}')


if __name__ == "__main__":
    sys.exit(main())
