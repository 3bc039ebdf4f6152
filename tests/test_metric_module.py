"""One metric instance shared by threads, pickled to another process, or loaded by two processes at once."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import threading
import time

import evaluate
import pytest
from gruen_models import save_all
from tiny_models import save_union_checkpoint

from story_quality import metric_path

REPO = pathlib.Path(__file__).resolve().parents[1]
TEXTS = [f"[MALE] went home on day {i} . he slept . the dog barked ." for i in range(24)]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return save_union_checkpoint(tmp_path_factory.mktemp("sharing") / "checkpoint")


def _slowed(function, seconds: float = 0.02):
    """``function`` with a pause before it: widens the window in which two unlocked threads overlap."""

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return function(*args, **kwargs)

    return slow


def _run_threads(work, count: int) -> list[BaseException]:
    """Run ``work(k)`` in ``count`` threads released together; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(k: int) -> None:
        try:
            start.wait()
            work(k)
        except BaseException as error:  # noqa: BLE001 (reported by the caller)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_threads_sharing_one_union_instance_each_get_their_own_scores_one_call_at_a_time(checkpoint):
    union = evaluate.load(metric_path("union"), str(checkpoint))
    expected = union.compute(predictions=TEXTS)["scores"]
    inside, most_inside = [0], [0]
    forward = union.scorer.logits_fn

    def counted_forward(*args, **kwargs):  # how many threads are in the model at once
        inside[0] += 1
        most_inside[0] = max(most_inside[0], inside[0])
        try:
            return _slowed(forward)(*args, **kwargs)
        finally:
            inside[0] -= 1

    union.scorer.logits_fn = counted_forward
    results: dict[int, list[list[float]]] = {}

    def work(k: int) -> None:
        for _ in range(3):
            results.setdefault(k, []).append(union.compute(predictions=TEXTS[k:] + TEXTS[:k])["scores"])

    assert _run_threads(work, 4) == []
    for k, runs in results.items():
        assert len(runs) == 3 and all(run == expected[k:] + expected[:k] for run in runs)
    assert most_inside[0] == 1, "two threads ran the model of one instance at once"


def test_threads_sharing_one_gruen_instance_each_get_their_own_scores(tmp_path):
    """gruen goes through evaluate's writer: unlocked, one thread's texts land in another's call."""
    gruen = evaluate.load(metric_path("gruen"))
    options = save_all(tmp_path / "gruen")
    texts = [f"The dog went home on day {i}. It was very happy." for i in range(6)]
    expected = gruen.compute(predictions=texts, **options)["scores"]
    gruen.add_batch = _slowed(gruen.add_batch)  # the instance's own add_batch, taken by compute
    results: dict[int, list[float]] = {}

    def work(k: int) -> None:
        results[k] = gruen.compute(predictions=texts[k:] + texts[:k], **options)["scores"]

    assert _run_threads(work, 3) == []
    # rotated texts batch differently: to the bound scores keep across batches (1e-6), not bit for bit
    assert results == {k: pytest.approx(expected[k:] + expected[:k], abs=1e-6) for k in range(3)}


@pytest.mark.parametrize("name", ["union", "gruen"])
def test_threads_adding_to_one_instance_lose_no_text(name, checkpoint, tmp_path):
    """Two threads that both find no writer would each open one; the first one's texts would be lost."""
    if name == "union":
        metric, options, texts = evaluate.load(metric_path("union"), str(checkpoint)), {}, TEXTS[:12]
    else:
        metric, options = evaluate.load(metric_path("gruen")), save_all(tmp_path / "gruen")
        texts = [f"The cat sat on mat {i}. It slept there." for i in range(8)]
    expected = dict(zip(texts, metric.compute(predictions=texts, **options)["scores"], strict=True))
    metric._init_writer = _slowed(metric._init_writer, 0.05)
    half = len(texts) // 2

    def work(k: int) -> None:
        if k == 0:
            for text in texts[:half]:
                metric.add(prediction=text)
        else:
            metric.add_batch(predictions=texts[half:])

    assert _run_threads(work, 2) == []
    scores = metric.compute(**options)["scores"]
    assert len(scores) == len(texts), f"{len(texts) - len(scores)} of {len(texts)} added texts were lost"
    assert sorted(scores) == pytest.approx(sorted(expected.values()), abs=1e-9)


def test_a_pickled_instance_loads_again_and_scores_the_same(checkpoint):
    union = evaluate.load(metric_path("union"), str(checkpoint))
    copy = pickle.loads(pickle.dumps(union))
    assert copy is not union and copy.config_name == str(checkpoint)
    assert copy.compute(predictions=TEXTS)["scores"] == union.compute(predictions=TEXTS)["scores"]


SCORE = """
import json, sys, evaluate
from story_quality import metric_path
union = evaluate.load(metric_path("union"), sys.argv[1])
print(json.dumps(union.compute(predictions=json.loads(sys.argv[2]))["scores"]))
"""


def test_two_processes_loading_at_once_with_empty_caches_both_score(checkpoint, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-c", SCORE, str(checkpoint), json.dumps(TEXTS)]
    runs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for _, err in outputs]
    first, second = (json.loads(out.strip().splitlines()[-1]) for out, _ in outputs)
    assert first == second
    assert first == pytest.approx(
        evaluate.load(metric_path("union"), str(checkpoint)).compute(predictions=TEXTS)["scores"], abs=1e-6
    )


MAP_IN_WORKERS = """
import json, os, sys, datasets, evaluate
from story_quality import metric_path
name, config, texts, options = sys.argv[1], sys.argv[2] or None, json.loads(sys.argv[3]), json.loads(sys.argv[4])
evaluate.logging.disable_progress_bar()
datasets.disable_progress_bars()
metric = evaluate.load(metric_path(name), config)
key = {"union": "scores", "gruen": "gruen"}[name]
in_parent = metric.compute(predictions=texts, **options)[key]  # torch's thread pool now exists in the parent

def score(batch):
    scores = metric.compute(predictions=batch["text"], **options)[key]
    return {"score": scores, "pid": [os.getpid()] * len(scores)}

mapped = datasets.Dataset.from_dict({"text": texts}).map(score, batched=True, batch_size=6, num_proc=2)
print(json.dumps({"parent": in_parent, "mapped": list(mapped["score"]), "pids": sorted(set(mapped["pid"]))}))
"""


@pytest.mark.parametrize("name", ["union", "gruen"])
def test_datasets_map_in_two_forked_workers_uses_the_parents_instance(name, checkpoint, tmp_path):
    """Before the fork hook, both workers hung in their first parallel torch operation."""
    if name == "union":
        config, texts, options = str(checkpoint), TEXTS, {}
    else:
        config, options = "", save_all(tmp_path / "gruen")
        texts = [f"The dog went home on day {i}. It was very happy. Then it ate." for i in range(12)]
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    command = [sys.executable, "-c", MAP_IN_WORKERS, name, config, json.dumps(texts), json.dumps(options)]
    run = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = run.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)  # the hung workers too, not only their parent
        run.communicate()
        pytest.fail("datasets.map(num_proc=2) with the metric loaded in the parent hung")
    assert run.returncode == 0, err[-2000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert len(result["pids"]) == 2, "the map must really have run in two worker processes"
    assert result["mapped"] == pytest.approx(result["parent"], abs=1e-6)
