"""What training UNION on one corpus fixes, in one record per corpus (``--normalization roc|wp``).

The preset's name picks the text normalisation the checkpoint records, the Hub id it is
published under, its model-card template and the corpus its card names.
"""

from __future__ import annotations

from dataclasses import dataclass

from story_quality.union.checkpoints import PUBLISHED_CHECKPOINTS
from story_quality.union.text import NAMED_NORMALIZATIONS, StoryNormalization


@dataclass(frozen=True)
class CorpusPreset:
    name: str
    corpus: str  # as the model card names it
    normalization: StoryNormalization
    hub_id: str
    card_template: str


PRESETS: dict[str, CorpusPreset] = {
    name: CorpusPreset(
        name=name,
        corpus=corpus,
        normalization=NAMED_NORMALIZATIONS[name],
        hub_id=PUBLISHED_CHECKPOINTS[name],
        card_template=f"union-{name}",
    )
    for name, corpus in (("roc", "ROCStories"), ("wp", "WritingPrompts"))
}
