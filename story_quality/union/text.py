"""The old name of :mod:`story_quality.union.normalization`, kept for one version (the cards named it).

Importing it warns; the next version removes it.
"""

import warnings

from story_quality.union.normalization import *  # noqa: F403 (the module's public names, as before)
from story_quality.union.normalization import StoryNormalization  # noqa: F401 (what the cards name)

warnings.warn(
    "story_quality.union.text is now story_quality.union.normalization; the old name goes in the next "
    "version.",
    FutureWarning,
    stacklevel=2,
)
