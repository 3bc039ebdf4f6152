"""UNION: story text normalisation, checkpoint loading and batched scoring (the library under metrics/union)."""

from story_quality import citation
from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = citation("guan-huang-2020-union")
