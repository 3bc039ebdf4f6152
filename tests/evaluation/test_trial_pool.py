"""Trials spread over processes: the rows in the order drawn, the same as one process gives; the
work of a small statistic stays in one process; an interrupted caller stops its workers."""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

from story_quality.evaluation import trial_pool


def squares_and_pid(trials):
    return np.array([[trial * trial, os.getpid()] for trial in trials], dtype=float)


def slow_rows(trials):
    time.sleep(0.3)
    return np.array([[trial] for trial in trials], dtype=float)


def test_the_rows_come_back_in_the_order_drawn_from_several_processes():
    trials = list(range(5 * trial_pool.CHUNK + 3))
    steps = []
    found = trial_pool.run_trials(squares_and_pid, trials, 1, processes=2, step=lambda: steps.append(1))
    np.testing.assert_array_equal(found[:, 0], np.array(trials, dtype=float) ** 2)
    assert len(steps) == len(trials)
    assert os.getpid() not in set(found[:, 1])  # computed by the workers
    alone = trial_pool.run_trials(squares_and_pid, trials, 1, processes=1)
    np.testing.assert_array_equal(alone[:, 0], found[:, 0])
    assert set(alone[:, 1]) == {os.getpid()}


def test_small_work_stays_in_one_process_and_large_work_takes_the_cores(monkeypatch):
    assert trial_pool.processes_for(100, 50) == 1
    monkeypatch.setattr(trial_pool.os, "sched_getaffinity", lambda pid: set(range(32)), raising=False)
    monkeypatch.setattr(trial_pool.sys, "platform", "linux")
    assert trial_pool.processes_for(1000, 500) == trial_pool.MOST_PROCESSES
    monkeypatch.setattr(trial_pool.sys, "platform", "darwin")
    assert trial_pool.processes_for(1000, 500) == 1  # no fork where forking is not safe


def test_an_interrupted_caller_stops_at_once_and_leaves_no_worker():
    def interrupt():
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        trial_pool.run_trials(slow_rows, list(range(40 * trial_pool.CHUNK)), 1, processes=2, step=interrupt)
    assert time.monotonic() - started < 5  # not after all 40 chunks (12 s on two processes)
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert multiprocessing.active_children() == []
