"""``python -m story_quality score ...`` is ``story-quality score ...``."""

import sys

from story_quality.cli import main

sys.exit(main())
