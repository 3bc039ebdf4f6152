"""training/README.md's two-minute recipe runs as written: the same lines, with a tiny encoder for
MiniLM and a dozen stories for UNION's ROC stories, end in ``evaluate.load`` scoring two stories."""

from __future__ import annotations

import json
import os
import subprocess

import tiny_models
from conftest import REPO
from test_build_union_data import STORY

HEADING = "## Two minutes: a tiny UNION, trained and scored"
NAMES = ("Ken", "Mary", "Tom", "Sue", "Bob", "Ann", "Jim", "Kate", "Sam", "Lucy", "Dan", "Jane")


def smoke_lines() -> str:
    """The recipe's shell block, as the README holds it."""
    section = (REPO / "training" / "README.md").read_text(encoding="utf-8").split(HEADING, 1)[1]
    return section.split("```bash\n", 1)[1].split("\n```", 1)[0]


def test_the_smoke_recipe_runs_as_written_and_ends_in_a_score(tmp_path):
    lines = smoke_lines()
    data = tmp_path / "data"
    (data / "union-roc").mkdir(parents=True)
    (data / "union-roc" / "reference.txt").write_text("\n".join(STORY.format(name=n) for n in NAMES) + "\n")
    encoder = tiny_models.save_masked_lm(tmp_path / "encoder", max_length=128, lowercase=True)
    stand_ins = {
        "DATA=../shared/data": f"DATA={data}",
        'MINILM=$(python -c "from benchmarks.machine import minilm_path; print(minilm_path())")': f"MINILM={encoder}",
    }
    for line, stand_in in stand_ins.items():
        assert line in lines, f"the recipe no longer holds {line!r}"
        lines = lines.replace(line, stand_in)
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "training").symlink_to(REPO / "training")  # `python training/...` from a clone's root
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        ["bash", "-e", "-c", lines], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    scores = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(scores) == 2 and all(0 <= score <= 1 for score in scores)
    assert (clone / "outputs" / "smoke-run" / "model.safetensors").is_file()
    assert json.loads((clone / "outputs" / "smoke-run" / "train_results.json").read_text())["epoch"] > 0
