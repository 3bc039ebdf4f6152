"""The models GRUEN uses by default: the one place their Hub ids are written.

The CoLA checkpoint is this project's own fine-tune (``training/train_cola.py`` imports
:data:`COLA_CHECKPOINT` from here), because the release's fine-tune was never published.
"""

from __future__ import annotations

LM_CHECKPOINT = "google-bert/bert-base-cased"
COLA_CHECKPOINT = "story-quality-metrics/gruen-cola-bert-base-cased"
SOP_CHECKPOINT = "albert/albert-base-v2"
