"""Quality benchmark: how well a metric's scores agree with human judgements of stories.

Reads UNION's annotation format, correlates any metric with the human scores next to the
published metrics, tests differences with Williams' test, and repeats the comparison on the
robustness sets of UNION's paper. ``python -m benchmarks.correlation --help`` for the CLI.
"""

from .analysis import CorrelationReport, evaluate_scores
from .report import to_markdown, write_biased_png, write_scatter_png

__all__ = [
    "CorrelationReport",
    "evaluate_scores",
    "to_markdown",
    "write_biased_png",
    "write_scatter_png",
]
