"""Quality benchmark: how well a metric's scores agree with human judgements of stories.

Reads UNION's annotation format, correlates any metric with the human scores next to the
published metrics, tests differences with Williams' test, and repeats the comparison on the
robustness sets of UNION's paper. ``python -m benchmarks.correlation --help`` for the CLI.
"""

from training.annotations import AnnotatedStories, AnnotationFormatError, read_annotations, read_scores

from .evaluation import CorrelationReport, evaluate_scores
from .report import to_markdown, write_biased_png, write_scatter_png
from .statistics import Correlation, WilliamsResult, compare_metrics, correlate, williams_test

__all__ = [
    "AnnotatedStories",
    "AnnotationFormatError",
    "Correlation",
    "CorrelationReport",
    "WilliamsResult",
    "compare_metrics",
    "correlate",
    "evaluate_scores",
    "read_annotations",
    "read_scores",
    "williams_test",
    "to_markdown",
    "write_biased_png",
    "write_scatter_png",
]
