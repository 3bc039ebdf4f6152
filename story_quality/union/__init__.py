"""UNION: story text normalisation, checkpoint loading and batched scoring (the library under metrics/union).

:class:`UnionScorer` (``story_quality.union.scorer``) scores texts with one checkpoint; its
options are :data:`story_quality.union.options.UNION_OPTIONS`.
"""

from story_quality.citations import citation
from story_quality.lazy_names import lazy_names
from story_quality.versions import check_min_versions

check_min_versions("transformers", "torch", "evaluate")


CITATION = citation("guan-huang-2020-union")
__all__ = ["CITATION", "UnionResult", "UnionScorer"]
# The scorer is imported when first asked for: the package's other modules need no transformers.
__getattr__ = lazy_names(__name__, "scorer", ("UnionScorer", "UnionResult"))
