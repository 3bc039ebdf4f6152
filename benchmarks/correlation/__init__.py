"""Quality benchmark: how well a metric's scores agree with human judgements of stories.

Reads UNION's annotation format, correlates any metric with the human scores next to the
published metrics, tests differences with Williams' test, and repeats the comparison on the
robustness sets of UNION's paper. ``python -m benchmarks.correlation --help`` for the CLI.
"""

from story_quality.training.evaluation import (
    AnnotatedStories,
    AnnotationFormatError,
    Correlation,
    WilliamsResult,
    compare_metrics,
    correlate,
    read_annotations,
    read_scores,
    williams_test,
)

from .evaluation import CorrelationReport, evaluate_scores
from .report import to_markdown, write_biased_png, write_scatter_png

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
