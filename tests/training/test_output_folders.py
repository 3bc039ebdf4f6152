"""No silent overwrite: a corpus or a run is never replaced by accident, nor left half-written."""

from __future__ import annotations

import json
import pathlib

import datasets
import pytest

from story_quality.training import build_union_data
from story_quality.training.output_folders import check_resumed_run, write_run_record, written_whole
from story_quality.training.run_setup import resume_checkpoint
from story_quality.training.train_cola import ColaTrainingArguments
from story_quality.training.union_arguments import UnionTrainingArguments

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
    with pytest.raises(SystemExit, match=rf"{out} already holds a built corpus; pass --overwrite"):
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


def test_training_into_an_empty_or_new_folder_is_allowed(tmp_path):
    assert resume_checkpoint(UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True)) is None
    assert resume_checkpoint(UnionTrainingArguments(output_dir=str(tmp_path / "new"), use_cpu=True)) is None


@pytest.mark.parametrize("arguments", [UnionTrainingArguments, ColaTrainingArguments])
@pytest.mark.parametrize("users_file", ["notes.txt", "README.md", "tokenizer_config.json"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_training_refuses_a_folder_holding_files_it_did_not_write(tmp_path, arguments, users_file, overwrite):
    (tmp_path / users_file).write_text("mine")
    with pytest.raises(FileExistsError, match=rf"holds files a training run did not write \({users_file}\)"):
        resume_checkpoint(arguments(output_dir=str(tmp_path), use_cpu=True, overwrite_output_dir=overwrite))
    assert (tmp_path / users_file).read_text() == "mine"


def test_training_over_an_earlier_run_with_a_users_file_beside_it_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "my_notes.md").write_text("mine")
    with pytest.raises(FileExistsError, match=r"did not write \(my_notes.md\)"):
        resume_checkpoint(
            UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True, overwrite_output_dir=True)
        )


def test_an_output_folder_holding_the_input_is_never_replaced(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    source = data / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Tom")))
    (data / "other.txt").write_text("mine")
    monkeypatch.chdir(data)
    for out in (str(data), ".", str(source)):
        with pytest.raises(SystemExit, match=r"(is|holds) the input|is a file"):
            build_union_data.main(
                [
                    str(source),
                    "--output-dir",
                    out,
                    "--overwrite",
                    "--tagger",
                    "heuristic",
                    "--wordnet",
                    "none",
                ]
            )
    assert sorted(p.name for p in data.iterdir()) == ["other.txt", "stories.txt"]
    assert (data / "other.txt").read_text() == "mine"


def test_overwrite_replaces_only_an_earlier_corpus(tmp_path):
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    with pytest.raises(SystemExit, match=r"holds files a corpus build did not write \(thesis.tex\)"):
        build(tmp_path, out, "--overwrite")
    assert (out / "thesis.tex").read_text() == "mine"
    (out / "thesis.tex").unlink()
    assert build(tmp_path, out) == 0 and build(tmp_path, out, "--overwrite", "--seed", "5") == 0


def test_an_unwritable_output_folder_fails_before_any_work(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("x")
    monkeypatch.setattr(build_union_data, "load_stories", lambda *a, **k: pytest.fail("work was done"))
    with pytest.raises(SystemExit, match=r"--output-dir .*a_file/corpus: cannot write there"):
        build(tmp_path, tmp_path / "a_file" / "corpus")


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--max-rows", "0"], "--max-rows: must be at least 1, got 0"),
        (["--max-rows", "-1"], "--max-rows: must be at least 1, got -1"),
        (["--min-sentences", "1"], "--min-sentences: must be at least 2, got 1"),
        (["--batch-size", "0"], "--batch-size: must be at least 1, got 0"),
        (["--num-proc", "-2"], "--num-proc: must be at least 1, got -2"),
        (["--copies", "0"], "--copies: must be at least 1, got 0"),
        (["--exclude-contexts-of", "missing.txt"], "--exclude-contexts-of missing.txt: no such file"),
    ],
)
def test_bad_numbers_and_files_are_usage_errors_naming_the_option(tmp_path, capsys, extra, expected):
    with pytest.raises(SystemExit) as error:
        build(tmp_path, tmp_path / "corpus", *extra)
    assert error.value.code == 2 and expected in capsys.readouterr().err
    assert not (tmp_path / "corpus").exists()


def test_no_empty_corpus_is_ever_saved(tmp_path):
    out = tmp_path / "corpus"
    assert build(tmp_path, out, "--seed", "1") == 0
    before = (out / build_union_data.SUMMARY_FILE).read_text()
    with pytest.raises(SystemExit, match="no story survived"):
        build(tmp_path, out, "--min-sentences", "99", "--overwrite")
    source = tmp_path / "stories.txt"
    with pytest.raises(SystemExit, match="no story survived"):
        build(tmp_path, out, "--exclude-contexts-of", str(source), "--overwrite")
    assert (out / build_union_data.SUMMARY_FILE).read_text() == before


def test_a_source_given_twice_is_refused_and_repeated_stories_kept_once(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Ken")))
    with pytest.raises(SystemExit) as error:
        build_union_data.main([str(source), str(source), "--output-dir", str(tmp_path / "c")])
    assert error.value.code == 2 and "is given twice" in capsys.readouterr().err
    assert build_union_data.main([str(source), "--output-dir", str(tmp_path / "c"), "--wordnet", "none"]) == 0
    summary = json.loads((tmp_path / "c" / build_union_data.SUMMARY_FILE).read_text())
    assert summary["stories"] == 2 and summary["repeated_stories_dropped"] == 1


def test_overwrite_replaces_a_corpus_that_training_left_cache_files_in(tmp_path):
    """Training maps the loaded corpus, and ``datasets`` writes its cache files into the corpus's folder."""
    out = tmp_path / "corpus"
    assert build(tmp_path, out, "--seed", "1") == 0
    datasets.load_from_disk(str(out)).map(lambda row: {"n": len(row["text"])})
    assert list(out.glob("cache-*.arrow"))
    assert build(tmp_path, out, "--seed", "2", "--overwrite") == 0
    assert json.loads((out / build_union_data.SUMMARY_FILE).read_text())["seed"] == 2
    assert not list(out.glob("cache-*.arrow"))


def test_a_folder_of_corpus_file_names_without_a_build_summary_is_not_a_corpus(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "state.json").write_text("my state")
    with pytest.raises(
        SystemExit, match=r"was not written by a corpus build \(it has no union_build_summary.json\)"
    ):
        build(tmp_path, out, "--overwrite")
    assert [p.name for p in out.iterdir()] == ["state.json"]


def test_a_run_stopped_before_saving_leaves_a_folder_training_may_use(tmp_path):
    """A fresh run records its settings first; stopped before its first checkpoint, the folder is still empty."""
    write_run_record(tmp_path, {"--max_length": 48})
    assert resume_checkpoint(UnionTrainingArguments(output_dir=str(tmp_path), use_cpu=True)) is None


def test_a_resume_is_compared_with_the_record_of_the_run_that_saved_the_checkpoint(tmp_path):
    write_run_record(tmp_path, {"--max_length": 48, "--normalization": "roc"})
    check_resumed_run(tmp_path / "checkpoint-3", {"--max_length": 48, "--normalization": "roc", "new": 1})
    with pytest.raises(
        ValueError, match=r"--max_length 64 \(the run used 48\)$|--max_length 64 \(the run used 48\)\."
    ):
        check_resumed_run(tmp_path / "checkpoint-3", {"--max_length": 64, "--normalization": "roc"})
    check_resumed_run(
        tmp_path / "elsewhere" / "checkpoint-3", {"--max_length": 64}
    )  # no record: nothing to compare
