"""``story-quality meta-evaluate``: the table, the JSON report and the picture; bad input refused in
one line naming the file and line (exit 2); and the command starts without torch."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from story_quality import cli, score_file
from story_quality.cli import meta_evaluate

SIGNATURE = "union|v0.3.0|checkpoint:tiny@sha256:0123456789ab|norm:none|window:48|long:head|fp32"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REPO = pathlib.Path(__file__).resolve().parents[2]


def write_set(folder: pathlib.Path, n_groups: int = 6) -> tuple[pathlib.Path, list[pathlib.Path]]:
    """Ratings (two raters a story, three systems, prompts) and two metrics' score files as
    story-quality score writes them."""
    rng = np.random.default_rng(0)
    rows, quality = [], []
    for g in range(n_groups):
        for s in range(3):
            q = 0.5 * s + rng.normal()
            rows.append({"id": f"{g}-{s}", "text": f"story {g} {s} " + "word " * int(rng.integers(2, 9)),
                         "human": [round(q + rng.normal(0, 0.5), 1) for _ in range(2)],
                         "system": f"sys{s}", "group": f"p{g}"})  # fmt: skip
            quality.append(q)
    ratings = folder / "ratings.jsonl"
    ratings.write_text("".join(json.dumps(row) + "\n" for row in rows))
    paths = []
    for name, noise in (("good", 0.3), ("poor", 2.0)):
        lines = []
        for i, (row, q) in enumerate(zip(rows, quality, strict=True)):
            record = {"index": i, "line": i + 1, score_file.TEXT_HASH: score_file.text_hash(row["text"])}
            if i == 0:
                record.update(signature=SIGNATURE, input_rows=len(rows))
            record["union"] = float(1 / (1 + np.exp(-(q + rng.normal(0, noise)))))
            lines.append(score_file.seal(record))
        paths.append(folder / f"{name}.jsonl")
        paths[-1].write_text("".join(lines))
    return ratings, paths


def test_the_command_prints_the_table_and_writes_the_report_and_the_picture(tmp_path, capsys):
    ratings, paths = write_set(tmp_path)
    report, picture = tmp_path / "meta.json", tmp_path / "meta.png"
    argv = ["meta-evaluate", str(ratings), *map(str, paths), "--resamples", "40", "--json", str(report),
            "--plot", str(picture)]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "pooled Pearson" in out and "raters (leave one out)" in out and "good.jsonl - poor.jsonl" in out
    data = json.loads(report.read_text())
    assert data["written_by"] == meta_evaluate.COMMAND and data["n"] == 18 and data["raters"] == 2
    assert [m["signature"] for m in data["metrics"]] == [SIGNATURE, SIGNATURE]
    assert data["pairs"][0]["figures"]["pooled.pearson"]["p_williams"] is not None
    assert picture.read_bytes().startswith(PNG_MAGIC)
    assert cli.main(argv) == 0  # its own report and picture are replaced


def test_outputs_it_did_not_write_are_left_alone(tmp_path, capsys):
    ratings, paths = write_set(tmp_path)
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}\n')
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--json", str(notes)]) == 2
    assert "was not written by story-quality meta-evaluate" in capsys.readouterr().err
    assert notes.read_text() == '{"mine": 1}\n'
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--json", str(paths[0])]) == 2
    assert "is the input" in capsys.readouterr().err
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--plot", str(tmp_path / "x.jpg")]) == 2
    assert "is a .png file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rows: rows.__setitem__(3, rows[3] | {"human": "n/a"}), "ratings.jsonl:4: human is 'n/a'"),
        (
            lambda rows: rows.__setitem__(5, rows[5] | {"human": [1.0]}),
            "ratings.jsonl:6: human lists 1 ratings",
        ),
        (
            lambda rows: rows.__setitem__(2, rows[2] | {"text": "edited"}),
            "good.jsonl:3: row 2 scored another text",
        ),
        (
            lambda rows: rows.__setitem__(7, {k: v for k, v in rows[7].items() if k != "system"}),
            "ratings.jsonl:8: no 'system' field",
        ),  # fmt: skip
    ],
)
def test_bad_ratings_are_refused_in_one_line_naming_the_line(tmp_path, capsys, edit, message):
    ratings, paths = write_set(tmp_path)
    rows = [json.loads(line) for line in ratings.read_text().splitlines()]
    edit(rows)
    ratings.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--resamples", "40"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("story-quality meta-evaluate: error: ") and message in err and err.count("\n") == 1


def test_a_column_named_on_the_command_line_must_exist_and_settings_are_checked(tmp_path, capsys):
    ratings, paths = write_set(tmp_path)
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--group-column", "prompt"]) == 2
    assert "no row has a 'prompt' field" in capsys.readouterr().err
    assert cli.main(["meta-evaluate", str(ratings), str(paths[0]), "--resamples", "5"]) == 2
    assert "--resamples must be from 40" in capsys.readouterr().err


def test_help_explains_the_command(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["meta-evaluate", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "--rating-column" in out and "ceiling" in out and "PERM-BOTH" in out


def test_the_command_runs_without_importing_torch_or_transformers(tmp_path):
    ratings, paths = write_set(tmp_path, n_groups=3)
    probe = (
        "import sys; from story_quality import cli; "
        f"code = cli.main(['meta-evaluate', {str(ratings)!r}, {str(paths[0])!r}, '--resamples', '40']); "
        "print(code, sorted({'torch', 'transformers', 'evaluate', 'nltk'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip().splitlines()[-1] == "0 []"
