"""GRUEN: the four aspects of linguistic quality (the library under metrics/gruen).

:class:`GruenScorer` (``story_quality.gruen.scorer``) scores texts with GRUEN's three models;
its options are :data:`story_quality.gruen.options.GRUEN_OPTIONS`.
"""

from story_quality.citations import citation
from story_quality.lazy_names import lazy_names
from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = citation("zhu-bhat-2020-gruen")
__all__ = ["CITATION", "GruenResult", "GruenScorer"]
# The scorer is imported when first asked for: the package's other modules need no transformers.
__getattr__ = lazy_names(__name__, "scorer", ("GruenScorer", "GruenResult"))
