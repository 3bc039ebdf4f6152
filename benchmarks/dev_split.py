"""Which human stories the development suite holds back, and the training corpora that leave them out.

The suite measures how well a checkpoint tells held-back human stories from their corrupted
copies, in both domains; no training run may see those stories. The rule is fixed and
needs no random state: every 50th story of ``roc-stories/stories.txt`` and every 10th story
of ``wp-stories/stories.jsonl`` (0-based line numbers divisible by the step) are held back.

    python -m benchmarks.dev_split --output-dir outputs/corpora          # writes the four files

writes ``roc_train.txt`` (every other ROC story of ``stories.txt`` and ``more_stories.jsonl``),
``wp_train.jsonl`` (the other WP stories of ``stories.jsonl``, then every story of
``more_stories.jsonl``, prompt and story), and the held-back
``roc_heldback.txt`` / ``wp_heldback.jsonl``, ready for ``training/build_union_data.py``; the
held-back two are also the stories ``training/shipped_assets/human_scale_table.py`` scores for the
shipped default's human scale (training imports nothing from here: it reads these files).
"""

from __future__ import annotations

import argparse
import json
import pathlib

from benchmarks.shared_data import shared_data
from story_quality.cli.flag_spellings import ScriptParser

ROC_STEP = 50
WP_STEP = 10


def roc_stories() -> tuple[list[str], list[str]]:
    """(training, held back) ROC stories: ``stories.txt`` split by the rule, then ``more_stories.jsonl``."""
    lines = shared_data("roc-stories", "stories.txt").read_text(encoding="utf-8").splitlines()
    held = [line for i, line in enumerate(lines) if i % ROC_STEP == 0 and line.strip()]
    train = [line for i, line in enumerate(lines) if i % ROC_STEP and line.strip()]
    with shared_data("roc-stories", "more_stories.jsonl").open(encoding="utf-8") as more:
        train += [json.loads(line)["text"] for line in more if line.strip()]
    return train, held


def _read_wp(name: str) -> list[dict]:
    with shared_data("wp-stories", name).open(encoding="utf-8") as source:
        rows = [json.loads(line) for line in source if line.strip()]
    return [{"prompt": row["prompt"], "story": row["story"]} for row in rows]


def wp_rows() -> tuple[list[dict], list[dict]]:
    """(training, held back) WP rows with ``prompt`` (or None) and ``story``.

    The held-back rows are fixed by ``stories.jsonl`` alone; ``more_stories.jsonl`` (added later)
    is all training, so the held-back set never changes.
    """
    rows = _read_wp("stories.jsonl")
    return (
        [row for i, row in enumerate(rows) if i % WP_STEP] + _read_wp("more_stories.jsonl"),
        [row for i, row in enumerate(rows) if i % WP_STEP == 0],
    )


def write_corpora(folder: pathlib.Path) -> dict[str, int]:
    """Write the four corpus files into ``folder``; the number of stories in each."""
    folder.mkdir(parents=True, exist_ok=True)
    roc_train, roc_held = roc_stories()
    wp_train, wp_held = wp_rows()
    for name, stories in (("roc_train.txt", roc_train), ("roc_heldback.txt", roc_held)):
        (folder / name).write_text(
            "".join(f"{' '.join(story.split())}\n" for story in stories), encoding="utf-8"
        )
    for name, rows in (("wp_train.jsonl", wp_train), ("wp_heldback.jsonl", wp_held)):
        (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return {
        "roc_train.txt": len(roc_train),
        "roc_heldback.txt": len(roc_held),
        "wp_train.jsonl": len(wp_train),
        "wp_heldback.jsonl": len(wp_held),
    }


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--output-dir", type=pathlib.Path, required=True, help="folder for the four corpus files"
    )
    counts = write_corpora(parser.parse_args().output_dir)
    print(json.dumps(counts, indent=2))


if __name__ == "__main__":
    main()
