"""The human scale table's builder: it scores the stories ``benchmarks.dev_split`` holds back (read from
the files its command writes, so training imports nothing from benchmarks) and records how it was made."""

from __future__ import annotations

import json
import pathlib

import pytest
from tiny_models import save_union_checkpoint

from benchmarks import dev_split
from story_quality.checkpoints.files import weights_sha256
from story_quality.training.corpora import writing_prompts_text
from story_quality.training.shipped_assets import human_scale_table
from story_quality.union.normalization import ROC_STORIES


def write_lines(path: pathlib.Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


@pytest.fixture
def shared_data(tmp_path, monkeypatch) -> pathlib.Path:
    """A small shared data folder: 101 ROC stories (3 held back), 21 WP rows (3 held back, one without prompt)."""
    data = tmp_path / "data"
    write_lines(
        data / "roc-stories" / "stories.txt",
        [f"Ken saw dog {i}. He went home. It was fun." for i in range(101)],
    )
    write_lines(data / "roc-stories" / "more_stories.jsonl", [json.dumps({"text": "Amy ran. She won."})])
    rows = [
        {
            "prompt": None if i == 10 else f"[ WP ] Prompt {i}.",
            "story": f"The king spoke {i}. <newline> We listened.",
        }
        for i in range(21)
    ]
    write_lines(data / "wp-stories" / "stories.jsonl", [json.dumps(row) for row in rows])
    write_lines(
        data / "wp-stories" / "more_stories.jsonl", [json.dumps({"prompt": "P.", "story": "S one. S two."})]
    )
    monkeypatch.setenv("STORY_QUALITY_DATA", str(data))
    return data


def test_the_builder_reads_exactly_the_stories_dev_split_holds_back(shared_data, tmp_path):
    dev_split.write_corpora(tmp_path / "corpora")
    stories = human_scale_table.human_stories(tmp_path / "corpora")
    wp = [writing_prompts_text(row["prompt"], row["story"]) for row in dev_split.wp_rows()[1]]
    assert stories == {"roc": dev_split.roc_stories()[1], "wp": [text for text in wp if text]}
    assert [len(texts) for texts in stories.values()] == [3, 3]
    assert (
        stories["wp"][1] == "The king spoke 10.\nWe listened."
    )  # no prompt: the story's first sentence leads


def test_a_folder_without_the_held_back_files_names_the_command_that_writes_them(tmp_path):
    (tmp_path / "roc_heldback.txt").write_text("A story.\n", encoding="utf-8")
    with pytest.raises(
        SystemExit, match=r"no wp_heldback\.jsonl.*python -m benchmarks\.dev_split --output-dir"
    ):
        human_scale_table.human_stories(tmp_path)


def test_the_table_records_its_stories_checkpoint_and_command_and_prints_the_pin(
    shared_data, tmp_path, capsys
):
    dev_split.write_corpora(tmp_path / "corpora")
    checkpoint = save_union_checkpoint(
        tmp_path / "tiny-union", normalization=ROC_STORIES.to_dict(), max_length=48
    )
    output = tmp_path / "tiny-union.json"
    human_scale_table.main(
        [str(tmp_path / "corpora"), "--checkpoint", str(checkpoint), "--output", str(output)]
    )
    table = json.loads(output.read_text(encoding="utf-8"))
    assert table["weights_sha256"] == weights_sha256(checkpoint)
    assert {name: (d["stories"], d["n"]) for name, d in table["domains"].items()} == {
        name: (about, 3) for name, about in human_scale_table.DOMAINS.items()
    }
    assert table["command"] == human_scale_table.COMMAND.format(checkpoint=checkpoint)
    assert table["command"].startswith(
        "python -m benchmarks.dev_split --output-dir CORPORA && python training/"
    )
    assert "pin it in story_quality/union/human_scale.py TABLES" in capsys.readouterr().out


def test_a_file_that_is_no_table_is_left_alone(tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="is not a human scale table; it is left alone"):
        human_scale_table.check_output(other)
    assert other.read_text(encoding="utf-8") == '{"mine": 1}\n'
