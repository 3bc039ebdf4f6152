import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("story-quality-metrics/gruen")
launch_gradio_widget(module)
