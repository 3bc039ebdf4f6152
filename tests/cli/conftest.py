"""Fixtures of the command tests: the tiny UNION checkpoint and the metric's own result for it
(defined with the stories and helpers in ``score_inputs.py``)."""

from score_inputs import compute_result, union_checkpoint  # noqa: F401 (fixtures)
