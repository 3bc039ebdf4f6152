"""The models GRUEN uses by default: the one place their Hub ids and pinned revisions are written.

GRUEN's release fine-tuned its own CoLA classifier, which was never put on the Hub. The default
is a public fine-tune of the same base model on the same data, pinned to one commit so that
every user scores with the same weights:
``Apucs/bert-fine-tuned-cola`` (``bert-base-cased`` on GLUE CoLA, Apache-2.0, validation
Matthews correlation 0.5731 as its model card reports; class 1 = acceptable, GLUE's order).
``training/train_cola.py`` trains the project's own (:data:`PROJECT_COLA_CHECKPOINT` when
published); any such folder can be passed as ``cola_model=``.
"""

from __future__ import annotations

LM_CHECKPOINT = "google-bert/bert-base-cased"
COLA_CHECKPOINT = "Apucs/bert-fine-tuned-cola"
COLA_REVISION = "2e97c90a2abbf40f72a0bbcdb2a4fb8cc728f34c"
SOP_CHECKPOINT = "albert/albert-base-v2"
# Where train_cola.py pushes the project's own CoLA fine-tune (not published yet).
PROJECT_COLA_CHECKPOINT = "story-quality-metrics/gruen-cola-bert-base-cased"

DEFAULT_REVISIONS = {COLA_CHECKPOINT: COLA_REVISION}


def default_revision(name: str, revision: str | None) -> str | None:
    """``revision`` if given, else the pinned revision of a default model (None for any other)."""
    return revision if revision is not None else DEFAULT_REVISIONS.get(name)
