"""What training UNION on one corpus fixes, in one record per corpus (``--normalization roc|wp``).

The preset's name picks the text normalisation the checkpoint records, its model-card template and
the corpus its card names (where a run is pushed is ``training.hub_push.repository_for``'s rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from story_quality.union.normalization import NAMED_NORMALIZATIONS, StoryNormalization


@dataclass(frozen=True)
class CorpusPreset:
    name: str
    corpus: str  # as the model card names it
    normalization: StoryNormalization
    card_template: str


PRESETS: dict[str, CorpusPreset] = {
    name: CorpusPreset(
        name=name,
        corpus=corpus,
        normalization=NAMED_NORMALIZATIONS[name],
        card_template=f"union-{name}",
    )
    for name, corpus in (("roc", "ROCStories"), ("wp", "WritingPrompts"))
}
