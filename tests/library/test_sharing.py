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

import evaluate
import pytest
from gruen_models import save_all
from tiny_models import save_union_checkpoint

from story_quality import metric_path

REPO = pathlib.Path(__file__).resolve().parents[2]
TEXTS = [f"[MALE] went home on day {i} . he slept . the dog barked ." for i in range(24)]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return save_union_checkpoint(tmp_path_factory.mktemp("sharing") / "checkpoint")


def test_threads_sharing_one_instance_each_get_their_own_scores(checkpoint):
    union = evaluate.load(metric_path("union"), str(checkpoint))
    expected = union.compute(predictions=TEXTS)["scores"]
    results: dict[int, list[list[float]]] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(3):
                results.setdefault(k, []).append(union.compute(predictions=TEXTS[k:] + TEXTS[:k])["scores"])
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for k, runs in results.items():
        assert len(runs) == 3 and all(run == expected[k:] + expected[:k] for run in runs)


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
