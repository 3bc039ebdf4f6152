"""The training pipeline: entry scripts users type, and the engine they import (see README.md here)."""

from story_quality.versions import check_min_versions

check_min_versions("transformers", "datasets", "accelerate", "torch")
