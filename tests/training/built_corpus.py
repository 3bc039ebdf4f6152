"""A built UNION corpus in miniature, as the generated negatives' tests need it."""

from __future__ import annotations

import datasets


def pairs(stories: dict[int, str], negatives_each: int = 2) -> datasets.Dataset:
    rows = []
    for index, story in stories.items():
        for copy in range(negatives_each):
            rows.append(
                {
                    "text": story,
                    "label": 1,
                    "original": story,
                    "context": "",
                    "corruptions": [],
                    "story_index": index,
                }
            )
            rows.append(
                {
                    "text": f"corrupted {copy} of {index}",
                    "label": 0,
                    "original": story,
                    "context": "",
                    "corruptions": ["reordering"],
                    "story_index": index,
                }
            )
    return datasets.Dataset.from_list(rows)
