"""A training script refuses as the package's commands do: ``SCRIPT: error: MESSAGE`` on one line, exit
status 2, no traceback; a launch that would silently train one process is refused; a YAML recipe is
read as a JSON one is; a mistyped local folder is named as missing, not as a bad Hub id."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
import yaml
from conftest import REPO

from story_quality.training import run_setup, train_union, union_arguments

# Runs each case as ``python training/SCRIPT ARGS`` would (runpy, __main__), in one process: a process
# per case would cost seconds of imports apiece. Each case sets its own launcher variables.
PROBE = """
import contextlib, io, json, os, pathlib, runpy, sys
results = []
for script, argv, env in json.loads(sys.argv[1]):
    saved = dict(os.environ)
    os.environ.update(env)
    sys.path[0] = str(pathlib.Path(script).parent.resolve())
    sys.argv = [script, *argv]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            runpy.run_path(script, run_name="__main__")
        code = None
    except SystemExit as stop:
        code = stop.code
    os.environ.clear()
    os.environ.update(saved)
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""
LAUNCH_VARIABLES = ("ACCELERATE_USE_CPU", "WORLD_SIZE", "MASTER_ADDR", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def run_scripts(cases: list[tuple[str, list[str], dict[str, str]]], cwd) -> list[tuple[int, str]]:
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    cases = [(str(REPO / "training" / script), argv, case_env) for script, argv, case_env in cases]
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(cases)], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    return [tuple(result) for result in json.loads(ran.stdout.strip().splitlines()[-1])]


# What `accelerate launch --num_processes 2` sets for the one process it starts (without --cpu: False).
LONE_LAUNCH = {"ACCELERATE_USE_CPU": "False", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def test_refusals_are_one_line_with_exit_status_2(tmp_path):
    (tmp_path / "runs").mkdir()
    out = ["--output_dir", str(tmp_path / "o")]
    cases = [
        ("train_union.py", ["--dataset", "x.jsonl", *out], LONE_LAUNCH),
        ("train_cola.py", out, LONE_LAUNCH),
        ("train_union.py", ["--model_name_or_path", "./my-bert", "--dataset", "x.jsonl", *out], {}),
        ("train_union.py", ["--dataset", "runs/union-pairs", *out], {}),
        ("train_cola.py", ["--model_name_or_path", "../no-such-folder/bert", *out], {}),
        ("train_union.py", [str(tmp_path / "missing.yaml")], {}),
        ("train_cola.py", [*out, "--hub_revision", "dev"], {}),
        ("train_union.py", ["--dataset", "x.jsonl", *out, "--max_length", "3"], {}),
    ]
    results = run_scripts(cases, tmp_path)
    lone = (
        "error: accelerate launch started one process although --num_processes asks for more (without GPUs, "
        "or with --cpu, its launcher starts several only through mpirun), so one process would train the "
        "whole run alone. For N processes on CPUs run `torchrun --nproc_per_node N training/{} ...` (several "
        "machines: add --nnodes, --node_rank, --master_addr); for one, drop --num_processes.\n"
    )
    assert results == [
        (2, "train_union.py: " + lone.format("train_union.py")),
        (2, "train_cola.py: " + lone.format("train_cola.py")),
        (
            2,
            "train_union.py: error: --model_name_or_path ./my-bert: no such file or folder ('my-bert' does "
            "not exist).\n",
        ),
        (
            2,
            "train_union.py: error: --dataset runs/union-pairs: no such file or folder ('runs/union-pairs' "
            "does not exist).\n",
        ),
        (
            2,
            "train_cola.py: error: --model_name_or_path ../no-such-folder/bert: no such file or folder "
            "('../no-such-folder' does not exist).\n",
        ),
        (
            2,
            f"train_union.py: error: recipe file {tmp_path / 'missing.yaml'}: [Errno 2] No such file or "
            f"directory: '{tmp_path / 'missing.yaml'}'\n",
        ),
        (
            2,
            "train_cola.py: error: --hub_revision dev names the branch of a push, but --push_to_hub is not "
            "set: nothing would be uploaded. Add --push_to_hub true, or drop --hub_revision.\n",
        ),
        (2, "train_union.py: error: --max_length must be between 16 and 4096 word pieces, got 3.\n"),
    ]
    assert not (tmp_path / "o").exists()  # refused before anything was written


@pytest.mark.skipif(torch.cuda.is_available(), reason="accelerate starts two GPU processes on a GPU machine")
def test_accelerate_launch_of_two_processes_without_a_gpu_trains_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--quiet", "--num_processes", "2",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        str(REPO / "training" / "train_union.py"), "--dataset", "x.jsonl", "--output_dir", str(tmp_path / "o"),
    ]  # fmt: skip
    ran = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ran.returncode != 0
    assert (
        "train_union.py: error: accelerate launch started one process although --num_processes" in ran.stderr
    )
    assert "torchrun --nproc_per_node N training/train_union.py" in ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout and not (tmp_path / "o").exists()


def parse_union(argv: list[str]):
    parser = train_union.HfArgumentParser(
        (
            union_arguments.ModelArguments,
            union_arguments.DataArguments,
            union_arguments.UnionTrainingArguments,
        )
    )
    return run_setup.parse_arguments(parser, argv)


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_a_yaml_recipe_is_read_as_the_same_json_recipe_is(tmp_path, suffix):
    recipe = {
        "dataset": "pairs.jsonl",
        "output_dir": str(tmp_path / "o"),
        "reconstruction_weight": 0.0,
        "normalization": "wp",
        "learning_rate": 1e-4,
        "report_to": ["none"],
        "bf16": False,
        "seed": 7,
    }
    (tmp_path / "run.json").write_text(json.dumps(recipe))
    (tmp_path / f"run{suffix}").write_text(yaml.safe_dump(recipe))
    from_json = parse_union([str(tmp_path / "run.json"), "--seed", "43"])
    from_yaml = parse_union([str(tmp_path / f"run{suffix}"), "--seed", "43"])
    assert from_yaml == from_json
    model_args, data_args, args = from_yaml
    assert (model_args.reconstruction_weight, data_args.normalization, args.learning_rate, args.seed) == (
        0.0,
        "wp",
        1e-4,
        43,  # a flag after the recipe wins
    )


def test_a_yaml_recipe_that_is_no_mapping_is_refused_naming_the_file(tmp_path):
    (tmp_path / "run.yaml").write_text("- dataset\n- pairs.jsonl\n")
    with pytest.raises(ValueError, match=r"recipe file .*run\.yaml: expected a YAML object \(mapping\)"):
        parse_union([str(tmp_path / "run.yaml")])


@pytest.mark.parametrize(
    "value", ["google-bert/bert-base-uncased", "bert-base-uncased", "roc"]
)  # Hub ids and corpus names pass on to their loaders
def test_names_that_are_not_local_paths_are_not_checked(tmp_path, value):
    parse_union(["--model_name_or_path", value, "--dataset", value, "--output_dir", str(tmp_path / "o")])
