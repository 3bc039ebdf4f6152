"""``score`` and ``compare`` agree on whether an output is complete, and the rerun they advise completes it."""

from __future__ import annotations

import pytest
from tiny_models import SAMPLE_STORIES, save_union_checkpoint

from story_quality import cli, score_file

STORIES = SAMPLE_STORIES


def identities(texts: list[str]) -> list[dict]:
    return [{"index": i, score_file.TEXT_HASH: score_file.text_hash(text)} for i, text in enumerate(texts)]


def test_an_output_resumed_with_another_number_of_input_rows_is_refused(tmp_path):
    rows = [{**identity, "union": 0.5} for identity in identities(STORIES[:3])]
    rows[0][score_file.INPUT_ROWS] = 7
    shorter = identities(STORIES[:5])
    with pytest.raises(score_file.ScoreFileError) as refused:
        score_file.refuse_other_input(rows, shorter, tmp_path / "out.jsonl", tmp_path / "in.txt")
    assert str(refused.value) == (
        f"--output {tmp_path / 'out.jsonl'} was started for an input of 7 rows but --input {tmp_path / 'in.txt'} "
        "has 5: the input changed, or it is another input. Rerun with the input it was started for to complete "
        "it, or name another --output."
    )
    score_file.refuse_other_input(rows, identities(STORIES), tmp_path / "out.jsonl", tmp_path / "in.txt")


def test_a_cut_output_resumed_with_a_shorter_input_is_refused_and_the_advised_rerun_completes_it(
    tmp_path, capsys
):
    checkpoint = save_union_checkpoint(tmp_path / "union", max_length=48)
    source, output = tmp_path / "stories.txt", tmp_path / "scores.jsonl"
    source.write_text("\n".join(STORIES) + "\n")
    command = ["score", "--metric", "union", "--input", str(source), "--output", str(output),
               "--checkpoint", str(checkpoint), "--chunk-size", "2"]  # fmt: skip
    assert cli.main(command) == 0
    output.write_text("".join(output.read_text().splitlines(keepends=True)[:3]))  # a run cut short
    cut = output.read_bytes()
    capsys.readouterr()
    source.write_text("\n".join(STORIES[:5]) + "\n")  # the input, shortened
    assert cli.main(command) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"story-quality score: error: --output {output} was started for an input of 7 rows but --input {source} "
        "has 5: the input changed, or it is another input. Rerun with the input it was started for to complete "
        "it, or name another --output."
    )
    assert output.read_bytes() == cut
    assert cli.main(["compare", str(output), "--no-paired"]) == 2
    assert "holds 3 of the 7 rows of its input" in capsys.readouterr().err
    source.write_text(
        "\n".join(STORIES) + "\n"
    )  # the rerun compare advises: the same command, the same input
    assert cli.main(command) == 0
    assert cli.main(["compare", str(output), "--no-paired"]) == 0
    assert len(output.read_text().splitlines()) == 7
