"""A held-back story's percentile does not move with the batch it is scored in (issue 47)."""

from __future__ import annotations

import numpy as np

from story_quality.union import human_scale


def test_a_held_back_storys_percentile_does_not_move_with_its_batch():
    rng = np.random.default_rng(0)
    exact = rng.uniform(0, 1, 200)  # the stories' scores as the table's run computed them
    table = np.round(exact, 6)  # as write_table stores them
    alone = human_scale.percentile_ranks(exact, table)
    for batch_noise in (-2e-6, -3e-7, 4e-7, 3e-6):  # the same stories beside other batch-mates
        moved = human_scale.percentile_ranks(exact + batch_noise, table)
        assert moved.tolist() == alone.tolist()
    assert set(alone.tolist()) == {100 * (k + 0.5) / 200 for k in range(200)}  # each ties its own entry
