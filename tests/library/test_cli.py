"""``story-quality score``: one row per input row equal to ``compute``, resumable, on one process or two."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import evaluate
import pytest
from gruen_models import save_all
from tiny_models import save_union_checkpoint

from story_quality import cli
from story_quality.union.story_text import ROC_STORIES

REPO = pathlib.Path(__file__).resolve().parents[2]
STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",
    "the dog ran to the school . the cat ate .",
    "Mary didn't like the new car. She sold it to her friend.",
    "I played with my friends after school. We ran and ran. Then we ate.",
    "He was sad.",
    "The old man walked his dog every day. One day the dog found a cat. They became friends.",
    "She ran to the park. She ran home.",
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return save_union_checkpoint(
        tmp_path_factory.mktemp("union") / "roc", normalization=ROC_STORIES.to_dict(), max_length=48
    )


@pytest.fixture(scope="module")
def expected(checkpoint) -> dict:
    return evaluate.load(str(REPO / "metrics" / "union"), str(checkpoint)).compute(predictions=STORIES)


def write_input(folder: pathlib.Path) -> pathlib.Path:
    path = folder / "stories.txt"
    path.write_text("\n".join(STORIES) + "\n")
    return path


def read_output(path: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def union_args(source: pathlib.Path, output: pathlib.Path, checkpoint: pathlib.Path) -> list[str]:
    """The command line that scores ``source`` into ``output`` with the union checkpoint."""
    return [
        "--metric",
        "union",
        "--input",
        str(source),
        "--output",
        str(output),
        "--checkpoint",
        str(checkpoint),
    ]


def run_cli(*args: str) -> int:
    return cli.main(["score", *args])


def test_one_row_per_story_equal_to_compute_with_the_signature_first(tmp_path, checkpoint, expected, capsys):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, checkpoint)) == 0
    rows = read_output(output)
    assert [row["index"] for row in rows] == list(range(len(STORIES)))
    assert [row["line"] for row in rows] == list(range(1, len(STORIES) + 1))
    assert [row["union"] for row in rows] == pytest.approx(expected["scores"], abs=1e-6)
    assert rows[0]["signature"] == expected["signature"] and "signature" not in rows[1]
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    assert summary.startswith(f"{len(STORIES)} texts scored (0 skipped), mean union ")
    assert summary.endswith(f"signature {expected['signature']}")


def test_a_cut_short_output_is_completed_by_rerunning(tmp_path, checkpoint, expected, capsys):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    args = union_args(source, output, checkpoint)
    assert run_cli(*args, "--chunk-size", "2") == 0
    whole = output.read_text()
    lines = whole.splitlines(keepends=True)
    output.write_text("".join(lines[:3]) + lines[3][:10])  # killed while writing the fourth row
    assert run_cli(*args, "--chunk-size", "2") == 0
    assert "3 of 7 rows already scored" in capsys.readouterr().err
    completed, uninterrupted = read_output(output), [json.loads(line) for line in whole.splitlines()]
    assert [(r["index"], r["line"]) for r in completed] == [(r["index"], r["line"]) for r in uninterrupted]
    # other batches around a story move its score by float rounding only (scores never depend on them)
    assert [r["union"] for r in completed] == pytest.approx([r["union"] for r in uninterrupted], abs=1e-5)


def test_a_different_setting_refuses_to_append(tmp_path, checkpoint, capsys):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    args = union_args(source, output, checkpoint)
    assert run_cli(*args) == 0
    before = output.read_text()
    output.write_text("".join(before.splitlines(keepends=True)[:2]))
    assert run_cli(*args, "--max-length", "20") == 2
    assert "was written with another metric or setting" in capsys.readouterr().err
    assert output.read_text() == "".join(before.splitlines(keepends=True)[:2])


def test_bad_rows_are_refused_by_line_or_skipped_with_a_reason(tmp_path, checkpoint, expected, capsys):
    source, output = tmp_path / "stories.jsonl", tmp_path / "scores.jsonl"
    records = [{"story": STORIES[0]}, {"story": ""}, {"story": 5}, {"story": STORIES[1]}]
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    args = union_args(source, output, checkpoint)
    assert run_cli(*args, "--text-column", "story") == 2
    assert "2 row(s) hold no text (line 2: empty; line 3: not text (int))" in capsys.readouterr().err
    assert not output.exists()
    assert run_cli(*args, "--text-column", "story", "--bad-rows", "skip") == 0
    rows = read_output(output)
    assert [row.get("skipped") for row in rows] == [None, "empty", "not text (int)", None]
    assert [rows[0]["union"], rows[3]["union"]] == pytest.approx(expected["scores"][:2], abs=1e-6)
    assert run_cli(*args, "--text-column", "text") == 2
    assert "stories.jsonl:1: no 'text' field" in capsys.readouterr().err


def test_csv_input_and_gruen_scores_every_aspect(tmp_path):
    paths = save_all(tmp_path / "models")
    source, output = tmp_path / "texts.csv", tmp_path / "scores.jsonl"
    source.write_text('id,text\n1,"The dog ran home. It was happy."\n2,"I went home. I went home."\n')
    args = ["--metric", "gruen", "--input", str(source), "--output", str(output)]
    assert run_cli(*args, "--lm-model", paths["lm_model"], "--cola-model", paths["cola_model"]) == 0
    rows = read_output(output)
    direct = evaluate.load(str(REPO / "metrics" / "gruen")).compute(
        predictions=["The dog ran home. It was happy.", "I went home. I went home."],
        lm_model=paths["lm_model"],
        cola_model=paths["cola_model"],
    )
    assert [row["line"] for row in rows] == [2, 3]
    for key in ("gruen", "grammaticality", "redundancy", "focus"):
        assert [row[key] for row in rows] == pytest.approx(direct[key], abs=1e-6)
    assert rows[0]["signature"] == direct["signature"]


def test_long_stories_reaches_the_metric_and_its_signature(tmp_path, checkpoint):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    args = union_args(source, output, checkpoint)
    assert run_cli(*args, "--max-length", "16", "--long-stories", "windows") == 0
    windowed = evaluate.load(str(REPO / "metrics" / "union"), str(checkpoint)).compute(
        predictions=STORIES, max_length=16, long_stories="windows"
    )
    rows = read_output(output)
    assert [row["union"] for row in rows] == pytest.approx(windowed["scores"], abs=1e-6)
    assert rows[0]["signature"] == windowed["signature"] and "|long:windows|" in windowed["signature"]


def test_help_and_option_errors(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--help"])
    assert done.value.code == 0 and "--bad-rows" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--metric", "union", "--input", "a.txt", "--output", "b.jsonl", "--coherence"])
    assert done.value.code == 2 and "are gruen options" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        cli.main(
            [
                "score",
                "--metric",
                "gruen",
                "--input",
                "a.txt",
                "--output",
                "b.jsonl",
                "--long-stories",
                "head",
            ]
        )
    assert done.value.code == 2 and "are union options" in capsys.readouterr().err


def offline_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def test_two_accelerate_processes_write_the_single_process_file(tmp_path, checkpoint):
    source = write_input(tmp_path)
    outputs = {}
    for processes in (1, 2):
        outputs[processes] = tmp_path / f"scores-{processes}.jsonl"
        command = [
            sys.executable, "-m", "accelerate.commands.launch", "--quiet", "--cpu",
            "--num_processes", str(processes), "--num_machines", "1", "--mixed_precision", "no",
            "--dynamo_backend", "no", "--num_cpu_threads_per_process", "1", "-m", "story_quality", "score",
            "--metric", "union", "--input", str(source), "--output", str(outputs[processes]),
            "--checkpoint", str(checkpoint), "--chunk-size", "3",
        ]  # fmt: skip
        run = subprocess.run(command, env=offline_env(), capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
    one, two = read_output(outputs[1]), read_output(outputs[2])
    assert [(r["index"], r["line"]) for r in one] == [(r["index"], r["line"]) for r in two]
    assert [r["union"] for r in two] == pytest.approx([r["union"] for r in one], abs=1e-6)
    assert one[0]["signature"] == two[0]["signature"]


DISTRIBUTED = """
import json, sys
import evaluate
rank, checkpoint, stories, cache = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
metric = evaluate.load(sys.argv[5], checkpoint, num_process=2, process_id=rank, experiment_id="dist-test",
                       cache_dir=cache)
metric.add_batch(predictions=stories[rank::2])
result = metric.compute()
print(json.dumps(result if rank == 0 else None))
"""


def test_evaluates_own_distributed_mode_gathers_every_score_on_process_zero(tmp_path, checkpoint, expected):
    shares = [STORIES[0::2], STORIES[1::2]]
    ordered = shares[0] + shares[1]  # evaluate concatenates the processes' batches in rank order
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                DISTRIBUTED,
                str(rank),
                str(checkpoint),
                json.dumps(STORIES),
                str(tmp_path),
                str(REPO / "metrics" / "union"),
            ],
            env=offline_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for rank in (0, 1)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs[0][1][-2000:] + outputs[1][1][-2000:]
    result = json.loads(outputs[0][0].strip().splitlines()[-1])
    by_story = dict(zip(STORIES, expected["scores"], strict=True))
    assert result["scores"] == pytest.approx([by_story[s] for s in ordered], abs=1e-6)
    assert result["signature"] == expected["signature"]
