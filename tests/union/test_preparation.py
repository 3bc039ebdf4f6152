"""num_workers: UNION's text prepared in worker processes gives the serial path's bytes and scores,
in input order, from a script without a main guard and inside torchrun's processes too."""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import warnings

import pytest
from tiny_models import roc_union_checkpoint

from story_quality.union import UnionScorer
from story_quality.union.encoding import Encoded, Rows, append_encoded, encode
from story_quality.union.normalization import ROC_STORIES, WRITING_PROMPTS
from story_quality.union.preparation import PreparationWorkers, _serve, prepare
from story_quality.union.windows import encode_windows

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = ("Tom", "Mary", "Kelly", "Ken", "Dr. Smith", "Sam")
WORDS = "went to the store and bought milk but it was raining so she stayed home with her dog".split()


def story(rng: random.Random, sentences: int, curly: bool = False) -> str:
    """A story of ``sentences`` sentences with names, contractions, quotes and, if ``curly``, typography."""
    out = []
    for _ in range(sentences):
        words = rng.choices(WORDS, k=rng.randint(3, 14))
        name = rng.choice(NAMES)
        quote = "\u201cHi,\u201d she said\u2014" if curly else '"Hi," she said - '
        out.append(f"{name} didn't {' '.join(words)}{rng.choice('.!?')}" if rng.random() < 0.7 else quote)
    return " ".join(out)


def stories() -> list[str]:
    """ROC-like stories (five sentences), WritingPrompts-like ones (long, paragraphs) and edge cases."""
    rng = random.Random(7)
    roc = [story(rng, 5) for _ in range(9)]
    wp = ["\n\n".join(story(rng, 8, curly=True) for _ in range(rng.randint(3, 8))) for _ in range(6)]
    return [*roc, *wp, "Sam.", "One", "a " * 300, roc[0]]


def joined(chunks) -> Encoded:
    first = None
    for start, _, part in chunks:
        if first is None:
            first = Encoded(
                Rows(), [], part.max_length, None if part.story_of is None else type(part.story_of)("i")
            )
        append_encoded(first, part, start)
    return first


def as_bytes(encoded: Encoded) -> tuple:
    story_of = None if encoded.story_of is None else list(encoded.story_of)
    return [bytes(row) for row in encoded.input_ids], encoded.truncated, story_of, encoded.max_length


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return roc_union_checkpoint(tmp_path_factory)


@pytest.fixture(scope="module")
def scorer(checkpoint) -> UnionScorer:
    return UnionScorer(str(checkpoint))


@pytest.mark.parametrize("normalization", [ROC_STORIES, WRITING_PROMPTS], ids=["roc", "wp"])
@pytest.mark.parametrize("long_stories", ["head", "windows"])
def test_workers_give_the_serial_bytes_in_input_order(scorer, normalization, long_stories):
    texts = stories()
    if long_stories == "windows":
        serial = encode_windows(scorer.tokenizer, texts, 48, normalization)
        assert len(serial.input_ids) > len(texts) + 10, "the long stories must need several windows"
    else:
        serial = encode(scorer.tokenizer, texts, 48, prepare=normalization)
        assert len(serial.truncated) >= 6
    workers = PreparationWorkers(scorer.tokenizer, normalization, 2)
    try:
        chunks = list(workers.chunks(texts, 48, long_stories, chunk_size=4))
    finally:
        workers.close()
    assert [(start, count) for start, count, _ in chunks] == [(0, 4), (4, 4), (8, 4), (12, 4), (16, 3)]
    assert as_bytes(joined(chunks)) == as_bytes(serial)
    assert as_bytes(prepare(scorer.tokenizer, normalization, texts, 48, long_stories)) == as_bytes(serial)


@pytest.mark.parametrize("long_stories", ["head", "windows"])
def test_scores_with_workers_are_the_serial_ones_within_1e6(scorer, long_stories):
    texts = stories() * 14  # two chunks of ENCODE_CHUNK
    with warnings.catch_warnings(record=True) as serial_warnings:
        warnings.simplefilter("always")
        serial = scorer.score(texts, long_stories=long_stories, num_workers=0, batch_size=8)
    with warnings.catch_warnings(record=True) as overlapped_warnings:
        warnings.simplefilter("always")
        overlapped = scorer.score(texts, long_stories=long_stories, num_workers=2, batch_size=8)
    assert overlapped.signature == serial.signature
    assert overlapped.scores == pytest.approx(serial.scores, abs=1e-6, rel=0)
    # the same warnings (truncation, unread text), naming the same stories
    assert len(serial_warnings) == (1 if long_stories == "head" else 0)
    assert [str(w.message) for w in overlapped_warnings] == [str(w.message) for w in serial_warnings]
    assert scorer.workers(2) is scorer.workers(2), "the workers are kept between calls"


def test_a_story_the_model_cannot_read_is_refused_by_its_index_with_workers(scorer):
    texts = ["Tom went home."] * 300 + ["\u0ba4\u0bae\u0bbf\u0bb4\u0bcd \u0bae\u0bca\u0bb4\u0bbf"]
    with pytest.raises(ValueError, match=r"predictions\[300\] has nothing the model can read"):
        scorer.score(texts, num_workers=1)


def test_a_failing_worker_is_reported_with_its_traceback(scorer):
    workers = PreparationWorkers(scorer.tokenizer, ROC_STORIES, 1)
    try:
        with pytest.raises(RuntimeError, match=r"preparation worker failed:\n(.|\n)*Traceback"):
            list(workers.chunks([None], 48, "head"))  # type: ignore[list-item]
        assert list(workers.chunks(["Tom ran."], 48, "head"))[0][1] == 1, "the worker serves on"
    finally:
        workers.close()
    assert all(worker.process.poll() is not None for worker in workers._workers) or not workers._workers


def test_the_worker_loop_answers_each_chunk_then_ends_with_its_input(scorer):
    requests = io.BytesIO()
    for message in [(scorer.tokenizer, ROC_STORIES), (["Tom ran."], 48, "head"), ([None], 48, "head")]:
        pickle.dump(message, requests)
    requests.seek(0)
    answers = io.BytesIO()
    _serve(requests, answers)
    answers.seek(0)
    first, second = pickle.load(answers), pickle.load(answers)
    assert first[0] == "ok" and as_bytes(first[1]) == as_bytes(
        encode(scorer.tokenizer, ["Tom ran."], 48, ROC_STORIES)
    )
    assert second[0] == "error" and "Traceback" in second[1]


@pytest.mark.parametrize(("value", "error"), [(-1, ValueError), ("2", TypeError), (True, TypeError)])
def test_a_wrong_worker_count_is_refused_by_name(scorer, value, error):
    with pytest.raises(error, match="num_workers must be an integer >= 0"):
        scorer.score(["Tom ran."], num_workers=value)


def test_a_script_without_a_main_guard_scores_with_workers(checkpoint, scorer, tmp_path):
    """Workers never re-import the caller's __main__, so a script needs no guard."""
    script = tmp_path / "no_guard.py"
    script.write_text(
        textwrap.dedent(f"""
            import json
            from story_quality.union import UnionScorer
            scorer = UnionScorer({str(checkpoint)!r})
            print(json.dumps(scorer.score({stories()!r} * 14, num_workers=2).scores))
        """)
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    scores = json.loads(run.stdout.strip().splitlines()[-1])
    assert scores == pytest.approx(scorer.score(stories() * 14, num_workers=0).scores, abs=1e-6, rel=0)


def test_torchrun_processes_each_start_their_own_workers(checkpoint, tmp_path):
    """``story-quality score --num-workers`` in each of two torchrun processes: no nested pool
    failure, and the file the one-process run without workers writes."""
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(text.replace("\n", " ") for text in stories() if text.strip()) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))

    def score(output, *launcher: str, workers: str) -> None:
        command = [
            *launcher,
            "-m",
            "story_quality",
            "score",
            "--metric",
            "union",
            "--checkpoint",
            str(checkpoint),
        ]
        command += [
            "--input",
            str(source),
            "--output",
            str(output),
            "--num-workers",
            workers,
            "--device",
            "cpu",
        ]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]

    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    score(one, sys.executable, workers="0")
    score(
        two,
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        workers="1",
    )
    rows = [json.loads(line) for line in one.read_text().splitlines()]
    again = [json.loads(line) for line in two.read_text().splitlines()]
    assert len(rows) == len(again) == len([text for text in stories() if text.strip()])
    assert [row["union"] for row in again] == pytest.approx([row["union"] for row in rows], abs=1e-6, rel=0)


def test_a_worker_count_above_the_bound_is_refused_with_the_bound(scorer):
    from story_quality.union.options import MOST_WORKERS

    with pytest.raises(ValueError, match=f"num_workers must be at most {MOST_WORKERS}.*got 1000000"):
        scorer.score(["Tom ran."], num_workers=10**6)


def test_ctrl_c_reaches_the_caller_not_its_workers_which_stop_quietly_with_it(scorer):
    """Ctrl-C signals the whole process group: a worker ignores it and serves on; the caller stops it."""
    import signal
    import time

    workers = PreparationWorkers(scorer.tokenizer, ROC_STORIES, 1)
    try:
        assert list(workers.chunks(["Tom ran."], 48, "head"))[0][1] == 1
        (worker,) = workers._workers
        worker.process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert worker.process.poll() is None, "a worker must not die of Ctrl-C"
        assert list(workers.chunks(["Ann sat."], 48, "head"))[0][1] == 1
    finally:
        workers.close()
    assert worker.process.returncode == 0


def test_the_workers_are_stopped_from_one_of_their_own_threads_without_an_error(scorer):
    workers = PreparationWorkers(scorer.tokenizer, ROC_STORIES, 1)
    list(workers.chunks(["Tom ran."], 48, "head"))
    started = list(workers._workers)
    # a collection may run the finaliser in a pool thread, which must not wait for itself
    assert workers._threads.submit(workers.close).result(timeout=30) is None
    assert len(started) == 1 and started[0].process.poll() is not None
