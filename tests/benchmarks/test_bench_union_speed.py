"""bench_union_speed's metric side: the options it times the metric with."""

from __future__ import annotations

import pytest
import torch

from benchmarks import bench_union_speed


class RecordingMetric:
    """Stands in for the loaded metric: records each compute's options, scores 0.5 per story."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def compute(self, predictions: list[str], **options: object) -> dict:
        self.calls.append(options)
        return {"scores": [0.5] * len(predictions), "signature": "union|test"}


@pytest.mark.parametrize("workers", [None, 0, 3])
def test_the_metric_side_times_the_metric_with_the_workers_asked_for(workers):
    metric = RecordingMetric()
    side = bench_union_speed.metric_side(metric, ["a b c."] * 5, 2, torch.device("cpu"), "fp32", workers)
    assert side(slice(0, 4)) == [0.5] * 4
    assert [call["num_workers"] for call in metric.calls] == [
        workers,
        workers,
    ]  # the warm-up and the timed run
    assert all(call["precision"] == "fp32" and call["batch_size"] == 2 for call in metric.calls)


def test_num_workers_reaches_the_options_from_the_command_line():
    assert bench_union_speed.build_parser().parse_args(["--num-workers", "0"]).num_workers == 0
    assert bench_union_speed.build_parser().parse_args([]).num_workers is None
