"""Every training command takes both spellings of its flags (``--output-dir`` and ``--output_dir``),
as the Trainer-based ones (``HfArgumentParser``) always did."""

from __future__ import annotations

import argparse
import ast
import json
import pathlib

import datasets
import pytest
from test_build_union_data import PLAIN_LEXICON, STORY

from story_quality.cli.flag_spellings import ScriptParser
from story_quality.training import build_union_data

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_each_long_flag_answers_to_both_spellings_in_subcommands_too():
    parser = ScriptParser(prog="tool")
    parser.add_argument("--output-dir")
    parser.add_argument("--max_length", type=int)
    parser.add_argument("-q", "--quiet", action="store_true")
    step = parser.add_subparsers(dest="command").add_parser("export")
    step.add_argument("--lm-epochs", type=int, default=1)
    expected = argparse.Namespace(output_dir="a", max_length=3, quiet=True, command="export", lm_epochs=2)
    for argv in (
        ["--output_dir", "a", "--max-length", "3", "-q", "export", "--lm_epochs", "2"],
        ["--output-dir", "a", "--max_length", "3", "--quiet", "export", "--lm-epochs", "2"],
    ):
        assert parser.parse_args(argv) == expected
    assert parser.parse_args(["--output", "a"]).output_dir == "a"  # a prefix of one option, not ambiguous
    with pytest.raises(SystemExit):
        parser.parse_args(["--output__dir", "a"])  # only the two spellings
    assert "--output_dir" not in parser.format_help()  # help names the declared spelling once


def argparse_parsers_built(path: pathlib.Path) -> list[int]:
    """Lines of ``path`` that build a plain ``argparse.ArgumentParser`` (one spelling per flag)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "ArgumentParser"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "argparse"
    ]


def test_no_script_builds_a_parser_of_one_spelling():
    found = {
        str(path.relative_to(REPO)): lines
        for folder in ("training", "benchmarks", "experiments", "story_quality")
        for path in sorted((REPO / folder).rglob("*.py"))
        if (lines := argparse_parsers_built(path))
    }
    assert found == {}, f"build the parser with story_quality.cli.flag_spellings.ScriptParser: {found}"


def test_flags_of_an_argument_group_answer_to_both_spellings_too():
    parser = ScriptParser(prog="tool")
    group = parser.add_argument_group("metric options")
    group.add_argument("--num-workers", type=int, default=0)
    group.add_argument("--batch_size", type=int, default=8)
    assert parser.parse_args(["--num_workers", "2", "--batch-size", "4"]) == argparse.Namespace(
        num_workers=2, batch_size=4
    )
    assert parser.parse_args(["--num", "3"]).num_workers == 3  # one option's prefix, not ambiguous


def test_story_quality_commands_take_both_spellings(tmp_path):
    from story_quality.cli import parse_args

    argv = ["score", "--metric", "union", "--input", "in.txt", "--output", "out.jsonl"]
    dashed = parse_args([*argv, "--num-workers", "2", "--bad-rows", "skip", "--chunk-size", "8"])
    underscored = parse_args([*argv, "--num_workers", "2", "--bad_rows", "skip", "--chunk_size", "8"])
    assert underscored == dashed and dashed.num_workers == 2 and dashed.chunk_size == 8


def test_build_union_data_takes_output_dir_with_an_underscore(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Tom")))
    assert build_union_data.main([str(source), "--output_dir", str(tmp_path / "out"), *PLAIN_LEXICON]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 6
    assert len(datasets.load_from_disk(str(tmp_path / "out"))) == 6
