"""``story-quality score`` on one process: one row per input row equal to ``compute``, resumable, never
writing a file it may not write."""

from __future__ import annotations

import errno
import json
import math
import os
import pathlib
import re
import shutil

import evaluate
import pytest
from gruen_models import save_all
from score_inputs import (  # noqa: F401 (union_checkpoint and compute_result are fixtures)
    REPO,
    STORIES,
    compute_result,
    read_output,
    run_cli,
    union_args,
    union_checkpoint,
    write_input,
)

from story_quality import cli, precision, score_file
from story_quality.cli import score as score_command


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
    records = [
        {"story": STORIES[0]},
        {"story": ""},
        {"story": 5},
        {"story": "... !? 🙂"},
        {"story": STORIES[1]},
    ]
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    args = union_args(source, output, checkpoint)
    assert run_cli(*args, "--text-column", "story") == 2
    assert (
        "3 row(s) hold no text (line 2: empty; line 3: not text (int); line 4: no word (no letter or digit))"
        in capsys.readouterr().err
    )
    assert not output.exists()
    assert run_cli(*args, "--text-column", "story", "--bad-rows", "skip") == 0
    rows = read_output(output)
    assert [row.get("skipped") for row in rows] == [
        None,
        "empty",
        "not text (int)",
        "no word (no letter or digit)",
        None,
    ]
    assert [rows[0]["union"], rows[4]["union"]] == pytest.approx(expected["scores"][:2], abs=1e-6)
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


def test_precision_reaches_the_metric_and_its_signature(tmp_path, checkpoint, monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)  # emulated where the CPU lacks it
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, checkpoint), "--precision", "bf16") == 0
    fast = evaluate.load(str(REPO / "metrics" / "union"), str(checkpoint)).compute(
        predictions=STORIES, precision="bf16"
    )
    rows = read_output(output)
    assert [row["union"] for row in rows] == pytest.approx(fast["scores"], abs=1e-6)
    assert rows[0]["signature"] == fast["signature"] and fast["signature"].endswith("|bf16-autocast")


def files_under(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def scored(
    folder: pathlib.Path, checkpoint: pathlib.Path, source: pathlib.Path | None = None
) -> pathlib.Path:
    """A complete output of ``source`` (the seven stories by default), as a first run writes it."""
    output = folder / "scores.jsonl"
    assert run_cli(*union_args(source or write_input(folder), output, checkpoint)) == 0
    return output


def other_stories(folder: pathlib.Path, changed_row: int) -> pathlib.Path:
    """An input as long as the seven stories that differs from them in row ``changed_row`` (1-based)."""
    stories = list(STORIES)
    stories[changed_row - 1] = "A different story. It is not the same."
    path = folder / "other.txt"
    path.write_text("\n".join(stories) + "\n")
    return path


def edit_row(output: pathlib.Path, line: int, change) -> None:
    rows = read_output(output)
    change(rows[line - 1])
    output.write_text("".join(json.dumps(row) + "\n" for row in rows))


def the_input_itself(folder, checkpoint):
    source = folder / "one.txt"
    source.write_text(STORIES[0])  # one story, no final newline: a resume would keep nothing of it
    return source, source


def a_one_row_jsonl_input_itself(folder, checkpoint):
    source = folder / "one.jsonl"
    source.write_text(json.dumps({"text": STORIES[0]}))
    return source, source


def a_symbolic_link_to_the_input(folder, checkpoint):
    source = write_input(folder)
    (folder / "link.jsonl").symlink_to(source)
    return source, folder / "link.jsonl"


def a_hard_link_to_the_input(folder, checkpoint):
    source = write_input(folder)
    os.link(source, folder / "same.jsonl")
    return source, folder / "same.jsonl"


def notes_without_a_final_newline(folder, checkpoint):
    (folder / "notes.md").write_text("remember: rerun with the wp checkpoint")
    return write_input(folder), folder / "notes.md"


def settings_json_without_a_final_newline(folder, checkpoint):
    (folder / "settings.json").write_text('{"batch_size": 4}')
    return write_input(folder), folder / "settings.json"


def a_one_line_jsonl_that_opens_like_a_row(folder, checkpoint):
    (folder / "mydata.jsonl").write_text('{"index": 0, "text": "mine", "author": "me"}')
    return write_input(folder), folder / "mydata.jsonl"


def a_pipe(folder, checkpoint):
    os.mkfifo(folder / "pipe.jsonl")
    return write_input(folder), folder / "pipe.jsonl"


def notes_with_a_final_newline(folder, checkpoint):
    (folder / "notes.md").write_text("# Notes\n")
    return write_input(folder), folder / "notes.md"


def complete_output_of_another_input(folder, checkpoint):
    return other_stories(folder, changed_row=2), scored(folder, checkpoint)


def cut_short_output_of_another_input(folder, checkpoint):
    output = scored(folder, checkpoint)
    output.write_text("".join(output.read_text().splitlines(keepends=True)[:4]))
    return other_stories(folder, changed_row=3), output


def an_edited_score(folder, checkpoint):
    output = scored(folder, checkpoint)
    edit_row(output, 3, lambda row: row.update(union=0.99))
    return folder / "stories.txt", output


def a_removed_score(folder, checkpoint):
    output = scored(folder, checkpoint)
    edit_row(output, 1, lambda row: row.pop("union"))
    return folder / "stories.txt", output


def a_deleted_row(folder, checkpoint):
    output = scored(folder, checkpoint)
    lines = output.read_text().splitlines(keepends=True)
    output.write_text("".join(lines[:1] + lines[2:]))
    return folder / "stories.txt", output


def a_missing_folder(folder, checkpoint):
    return write_input(folder), folder / "not-made" / "scores.jsonl"


def a_folder(folder, checkpoint):
    (folder / "scores.jsonl").mkdir()
    return write_input(folder), folder / "scores.jsonl"


REFUSED_OUTPUTS = [
    (the_input_itself, r"one\.txt is the input .*one\.txt; writing it would destroy the input"),
    (a_one_row_jsonl_input_itself, r"one\.jsonl is the input"),
    (a_symbolic_link_to_the_input, r"link\.jsonl is the input .*stories\.txt"),
    (a_hard_link_to_the_input, r"same\.jsonl is the input .*stories\.txt"),
    (notes_without_a_final_newline, r"notes\.md ends with a line this command did not write"),
    (settings_json_without_a_final_newline, r"settings\.json ends with a line this command did not write"),
    (notes_with_a_final_newline, r"notes\.md, line 1: not a row this command writes"),
    (a_one_line_jsonl_that_opens_like_a_row, r"mydata\.jsonl ends with a line this command did not write"),
    (a_pipe, r"pipe\.jsonl is not a regular file"),
    (complete_output_of_another_input, r"row 2 is not the output of row 2 of --input .*other\.txt"),
    (cut_short_output_of_another_input, r"row 3 is not the output of row 3 of --input .*other\.txt"),
    (an_edited_score, r"scores\.jsonl, line 3: this row was changed after it was written"),
    (a_removed_score, r"scores\.jsonl, line 1: this row was changed after it was written"),
    (a_deleted_row, r"line 2 holds the row of input row 3 where input row 2 belongs"),
    (a_missing_folder, r"the folder .*not-made does not exist"),
    (a_folder, r"scores\.jsonl is a folder"),
]


@pytest.mark.parametrize(
    ("prepare", "message"), REFUSED_OUTPUTS, ids=[p.__name__ for p, _ in REFUSED_OUTPUTS]
)
def test_an_output_the_command_may_not_write_is_refused_before_any_model_loads_and_left_as_it_was(
    tmp_path, checkpoint, monkeypatch, capsys, prepare, message
):
    source, output = prepare(tmp_path, checkpoint)
    before = files_under(tmp_path)
    capsys.readouterr()
    monkeypatch.setattr(score_command, "load_scorer", lambda *args: pytest.fail("a model was loaded"))
    assert run_cli(*union_args(source, output, checkpoint)) == 2
    assert re.search(message, capsys.readouterr().err)
    assert files_under(tmp_path) == before  # nothing changed, no lock left behind


def test_an_output_being_written_by_another_run_is_refused_naming_the_lock(tmp_path, checkpoint, capsys):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    with score_file.claim_output(output):
        assert run_cli(*union_args(source, output, checkpoint)) == 2
        error = capsys.readouterr().err
    assert f"is being written by process {os.getpid()} (it holds {output}.lock)" in error
    assert not output.exists() and not (tmp_path / "scores.jsonl.lock").exists()
    assert run_cli(*union_args(source, output, checkpoint)) == 0  # the lock went with its run


def test_a_folder_that_takes_no_new_file_is_named_before_any_model_loads(
    tmp_path, checkpoint, monkeypatch, capsys
):
    real_open = os.open

    def read_only(path, *args, **kwargs):
        if str(path).endswith(".lock"):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(score_file.claim.os, "open", read_only)
    monkeypatch.setattr(score_command, "load_scorer", lambda *args: pytest.fail("a model was loaded"))
    assert run_cli(*union_args(write_input(tmp_path), tmp_path / "scores.jsonl", checkpoint)) == 2
    assert f"cannot write in {tmp_path} (Read-only file system)" in capsys.readouterr().err


def an_empty_file(output: pathlib.Path) -> None:
    output.write_text("")


def a_first_row_cut_short(output: pathlib.Path) -> None:
    output.write_text('{"index": 0, "li')


def a_lock_left_by_a_killed_run(output: pathlib.Path) -> None:
    (output.parent / (output.name + ".lock")).write_text("999999999\n")


@pytest.mark.parametrize("leftover", [an_empty_file, a_first_row_cut_short, a_lock_left_by_a_killed_run])
def test_what_a_killed_run_leaves_is_written_over(tmp_path, checkpoint, expected, leftover):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    leftover(output)
    assert run_cli(*union_args(source, output, checkpoint)) == 0
    assert [row["union"] for row in read_output(output)] == pytest.approx(expected["scores"], abs=1e-6)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["scores.jsonl", "stories.txt"]


def test_a_complete_output_is_left_as_it_is_and_a_deleted_last_row_is_scored_again(
    tmp_path, checkpoint, capsys
):
    output = scored(tmp_path, checkpoint)
    whole = output.read_bytes()
    args = union_args(tmp_path / "stories.txt", output, checkpoint)
    assert run_cli(*args) == 0 and output.read_bytes() == whole
    assert "7 of 7 rows already scored" in capsys.readouterr().err
    output.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 1])
    assert run_cli(*args) == 0
    again, first = read_output(output), [json.loads(line) for line in whole.splitlines()]
    assert again[:6] == first[:6] and again[6]["text_hash"] == first[6]["text_hash"]
    assert again[6]["union"] == pytest.approx(first[6]["union"], abs=1e-5)  # scored alone: float rounding


def test_a_score_that_is_not_a_number_is_never_written(tmp_path, checkpoint, monkeypatch, capsys):
    real_per_row, calls = score_command.per_row, []

    def a_nan_in_the_second_chunk(metric, result, count):
        rows = real_per_row(metric, result, count)
        calls.append(count)
        if len(calls) == 2:
            rows[1] = dict(rows[1], union=math.nan)  # row 5 of the chunk of rows 4-6
        return rows

    monkeypatch.setattr(score_command, "per_row", a_nan_in_the_second_chunk)
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, checkpoint), "--chunk-size", "3") == 2
    assert re.search(r"stories\.txt:5 \(row 5\): the metric gave nan for union", capsys.readouterr().err)
    assert [row["index"] for row in read_output(output)] == [0, 1, 2]  # the rows before that chunk, all JSON


def test_a_checkpoint_with_a_nan_weight_writes_nothing(tmp_path, checkpoint, capsys):
    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken"
    shutil.copytree(checkpoint, broken)
    weights = load_file(broken / "model.safetensors")
    name = next(key for key, tensor in weights.items() if tensor.is_floating_point())
    weights[name] = weights[name].clone().fill_(float("nan"))
    save_file(weights, broken / "model.safetensors")
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, broken)) == 2
    assert "nan" in capsys.readouterr().err.lower()
    assert not output.exists()


def test_rows_start_at_their_line_whatever_the_text_holds(tmp_path, checkpoint):
    text = tmp_path / "stories.txt"
    text.write_text(f"{STORIES[0]}\u2028{STORIES[1]}\n{STORIES[2]}\x0c{STORIES[3]}\r\n{STORIES[4]}\n")
    jsonl = tmp_path / "stories.jsonl"
    jsonl.write_text(json.dumps({"text": f"{STORIES[0]}\u2028{STORIES[1]}"}, ensure_ascii=False) + "\n\n")
    table = tmp_path / "stories.csv"
    table.write_text(f'id,text\n1,"{STORIES[0]}\n\n{STORIES[1]}"\n2,{STORIES[2]}\n')
    texts = {
        text: [f"{STORIES[0]}\u2028{STORIES[1]}", f"{STORIES[2]}\x0c{STORIES[3]}", STORIES[4]],
        jsonl: [f"{STORIES[0]}\u2028{STORIES[1]}"],
        table: [f"{STORIES[0]}\n\n{STORIES[1]}", STORIES[2]],
    }
    for source, lines in ((text, [1, 2, 3]), (jsonl, [1]), (table, [2, 5])):
        output = tmp_path / f"{source.suffix[1:]}.jsonl"
        assert run_cli(*union_args(source, output, checkpoint)) == 0
        rows = read_output(output)
        assert [row["line"] for row in rows] == lines, source.name
        assert [row["text_hash"] for row in rows] == [score_file.text_hash(t) for t in texts[source]]


def test_help_says_how_the_shipped_default_reads_a_long_story(capsys):
    from story_quality.union.checkpoints import shipped_default_dir

    recorded = json.loads((shipped_default_dir() / "config.json").read_text())["union_long_stories"]
    with pytest.raises(SystemExit):
        cli.main(["score", "--help"])
    assert f"the shipped default records {recorded})" in " ".join(capsys.readouterr().out.split())


def test_help_and_option_errors(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--help"])
    assert done.value.code == 0 and "--bad-rows" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--metric", "union", "--input", "a.txt", "--output", "b.jsonl", "--coherence"])
    assert (
        done.value.code == 2 and "--coherence is an option of gruen, not of union" in capsys.readouterr().err
    )
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
    assert (
        done.value.code == 2
        and "--long-stories is an option of union, not of gruen" in capsys.readouterr().err
    )


def onednn_or_skip() -> None:
    import torch

    from story_quality.bert_forward import onednn_products

    if onednn_products.onednn_refusal(torch.device("cpu")):
        pytest.skip(onednn_products.onednn_refusal(torch.device("cpu")))


def test_a_file_begun_with_one_fp32_library_is_finished_with_the_other(tmp_path, checkpoint, monkeypatch):
    """The two fp32 libraries' scores agree to 1e-6: a resumed run joins them under the file's signature."""
    onednn_or_skip()
    source, output, whole = write_input(tmp_path), tmp_path / "scores.jsonl", tmp_path / "whole.jsonl"
    monkeypatch.setenv("STORY_QUALITY_FP32_LIBRARY", "onednn")
    assert run_cli(*union_args(source, output, checkpoint), "--chunk-size", "2") == 0
    begun = output.read_text().splitlines(keepends=True)
    output.write_text("".join(begun[:3]))
    monkeypatch.setenv("STORY_QUALITY_FP32_LIBRARY", "torch")
    assert run_cli(*union_args(source, output, checkpoint), "--chunk-size", "2") == 0
    assert run_cli(*union_args(source, whole, checkpoint), "--chunk-size", "2") == 0
    joined, torch_only = read_output(output), read_output(whole)
    assert joined[0]["signature"].endswith("|fp32-onednn") and torch_only[0]["signature"].endswith("|fp32")
    assert [row for row in joined[1:] if "signature" in row] == []
    # other batch-mates on resuming move a score by float rounding (to 1e-5), the library by about 1e-7
    assert [r["union"] for r in joined] == pytest.approx([r["union"] for r in torch_only], abs=1e-5)
    assert score_file.file_signature(output, list(enumerate(joined))) == joined[0]["signature"]


def test_the_default_precision_as_users_run_it_times_the_libraries_and_signs_the_one_it_chose(
    tmp_path, checkpoint, expected, monkeypatch
):
    """No library pinned (as a user runs it): the choice is timed, kept in the cache, and signed."""
    monkeypatch.delenv("STORY_QUALITY_FP32_LIBRARY")
    monkeypatch.setenv("STORY_QUALITY_CACHE", str(tmp_path / "cache"))
    from story_quality.bert_forward import onednn_products

    onednn_products._timed_library.cache_clear()
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, checkpoint)) == 0
    rows = read_output(output)
    import torch

    chosen = onednn_products.fp32_library(torch.device("cpu"))
    assert rows[0]["signature"].endswith("|fp32-onednn" if chosen == "onednn" else "|fp32")
    assert [row["union"] for row in rows] == pytest.approx(expected["scores"], abs=1e-6)
    if onednn_products.onednn_refusal(torch.device("cpu")) is None:
        assert any((tmp_path / "cache").iterdir())  # the timing is kept for the next process
    onednn_products._timed_library.cache_clear()


def test_output_dash_writes_the_rows_of_a_file_run_to_standard_output(tmp_path, checkpoint, capsys):
    source, output = write_input(tmp_path), tmp_path / "scores.jsonl"
    assert run_cli(*union_args(source, output, checkpoint)) == 0
    capsys.readouterr()
    dashed = [arg if arg != str(output) else "-" for arg in union_args(source, output, checkpoint)]
    assert run_cli(*dashed) == 0
    printed = capsys.readouterr()
    assert printed.out == output.read_text()
    assert printed.err.strip().splitlines()[-1].startswith(f"{len(STORIES)} texts scored (0 skipped)")
    assert not pathlib.Path("-").exists()
