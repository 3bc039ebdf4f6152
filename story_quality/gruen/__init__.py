"""GRUEN: the four aspects of linguistic quality (the library under metrics/gruen)."""

from story_quality import citation
from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = citation("zhu-bhat-2020-gruen")
