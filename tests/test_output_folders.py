"""No silent overwrite: a corpus or a run is never replaced by accident, nor left half-written."""

from __future__ import annotations

import json
import pathlib

import datasets
import pytest
from story_quality.training import build_union_data
from story_quality.training.output_folders import written_whole
from story_quality.training.run_setup import resume_checkpoint
from story_quality.training.train_cola import ColaTrainingArguments
from story_quality.training.train_union import UnionTrainingArguments

STORY = (
    "{name} went to the park. {name} saw a dog. The dog was happy. {name} threw a ball. They played all day."
)


def build(tmp_path: pathlib.Path, out: pathlib.Path, *extra: str) -> int:
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Tom")))
    return build_union_data.main(
        [str(source), "--output-dir", str(out), "--tagger", "heuristic", "--wordnet", "none", *extra]
    )


def test_a_built_corpus_is_not_replaced_without_overwrite(tmp_path, capsys):
    out = tmp_path / "corpus"
    assert build(tmp_path, out, "--seed", "1") == 0
    first = json.loads((out / build_union_data.SUMMARY_FILE).read_text())
    with pytest.raises(SystemExit, match=rf"{out} already exists and is not empty; pass --overwrite"):
        build(tmp_path, out, "--seed", "2")
    assert json.loads((out / build_union_data.SUMMARY_FILE).read_text()) == first  # untouched
    assert build(tmp_path, out, "--seed", "2", "--overwrite") == 0
    assert json.loads((out / build_union_data.SUMMARY_FILE).read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "stories.txt"]  # no scratch left


def test_an_interrupted_build_leaves_no_loadable_folder(tmp_path, monkeypatch):
    def fail_half_way(self, path, *args, **kwargs):
        (pathlib.Path(path) / "data-00000-of-00001.arrow").write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(datasets.Dataset, "save_to_disk", fail_half_way)
    out = tmp_path / "corpus"
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path, out)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stories.txt"]


def test_written_whole_keeps_the_old_folder_until_the_new_one_is_complete(tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with written_whole(target) as scratch:
            (scratch / "new.txt").write_text("new")
            raise RuntimeError("killed")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    with written_whole(target) as scratch:
        (scratch / "new.txt").write_text("new")
    assert [p.name for p in target.iterdir()] == ["new.txt"]


@pytest.mark.parametrize("arguments", [UnionTrainingArguments, ColaTrainingArguments])
@pytest.mark.parametrize(
    "leftover", ["config.json", "model.safetensors", "trainer_state.json", "checkpoint-500"]
)
def test_training_refuses_a_folder_holding_a_run(tmp_path, arguments, leftover):
    out = tmp_path / "run"
    out.mkdir()
    if leftover.startswith("checkpoint-"):
        save_checkpoint(out / leftover)
    else:
        (out / leftover).write_text("{}")
    with pytest.raises(FileExistsError, match=rf"{out} already holds a trained model or checkpoints"):
        resume_checkpoint(arguments(output_dir=str(out), use_cpu=True))
    assert resume_checkpoint(arguments(output_dir=str(out), use_cpu=True, overwrite_output_dir=True)) is None
    if leftover.startswith("checkpoint-"):
        resumed = resume_checkpoint(
            arguments(output_dir=str(out), use_cpu=True, resume_from_checkpoint="last")
        )
        assert resumed == str(out / leftover)


def save_checkpoint(folder: pathlib.Path, state: str = '{"global_step": 1}') -> None:
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(state)
    (folder / "model.safetensors").write_bytes(b"weights")


def test_resuming_last_passes_over_a_checkpoint_cut_short_while_saving(tmp_path, caplog):
    save_checkpoint(tmp_path / "checkpoint-20")
    save_checkpoint(tmp_path / "checkpoint-40", state="")  # killed while writing its state
    (tmp_path / "checkpoint-60").mkdir()  # killed before writing anything
    with caplog.at_level("WARNING"):
        found = resume_checkpoint(
            UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True, resume_from_checkpoint="last")
        )
    assert found == str(tmp_path / "checkpoint-20")
    assert "checkpoint-40: trainer_state.json is incomplete" in caplog.text
    assert "checkpoint-60: trainer_state.json is missing" in caplog.text
    with pytest.raises(ValueError, match=r"checkpoint-40: trainer_state.json is incomplete"):
        resume_checkpoint(
            UnionTrainingArguments(
                output_dir=str(tmp_path), use_cpu=True, resume_from_checkpoint=str(tmp_path / "checkpoint-40")
            )
        )
    (tmp_path / "checkpoint-20" / "trainer_state.json").write_text("{")
    with pytest.raises(ValueError, match="no complete checkpoint"):
        resume_checkpoint(
            UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True, resume_from_checkpoint="last")
        )


def test_training_into_an_empty_or_unrelated_folder_is_allowed(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert resume_checkpoint(UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True)) is None
    assert resume_checkpoint(UnionTrainingArguments(output_dir=str(tmp_path / "new"), use_cpu=True)) is None
