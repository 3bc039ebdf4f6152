import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("story-quality-metrics/coherence_fluency")
launch_gradio_widget(module)
