import evaluate

from story_quality.cli.space_page import launch_page

launch_page(evaluate.load("story-quality-metrics/union"))
