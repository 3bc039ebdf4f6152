"""One rule for a flag of the other metric: every option of one metric's spec, given with the other, is refused by name."""

from __future__ import annotations

import pytest

from story_quality import cli
from story_quality.registry import option_specs

FILES = ["--input", "a.txt", "--output", "b.jsonl"]


def flag_words(option) -> list[str]:
    """The option on the command line, with a value its kind takes."""
    if option.kind == "flag":
        return [option.flag]
    value = {"count": "64", "choice": option.choices[0] if option.choices else "", "device": "cpu"}
    return [option.flag, value.get(option.kind, "some/model")]


OTHERS = [
    (metric, other, option)
    for metric, spec in option_specs().items()
    for other, other_spec in option_specs().items()
    if other != metric
    for option in spec.command_line
    if option.name not in {mine.name for mine in other_spec.command_line}
]


@pytest.mark.parametrize(
    ("owner", "chosen", "option"), OTHERS, ids=[f"{o.name}-with-{c}" for _, c, o in OTHERS]
)
def test_every_option_of_one_metric_given_with_the_other_is_refused_by_name(capsys, owner, chosen, option):
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--metric", chosen, *FILES, *flag_words(option)])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"story-quality score: error: {option.flag} is an option of {owner}, not of {chosen}: drop it, or "
        f"score with --metric {owner}"
    )


def test_the_checkpoint_is_unions_and_refused_with_gruen(capsys):
    """``score --metric gruen --checkpoint X`` was silently ignored: --checkpoint is in union's spec."""
    assert "checkpoint" in {option.name for option in option_specs()["union"].loading}
    with pytest.raises(SystemExit) as done:
        cli.main(
            ["score", "--metric", "gruen", *FILES, "--checkpoint", "org/cola", "--percentiles", "human-roc"]
        )
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "story-quality score: error: --percentiles, --checkpoint are options of union, not of gruen: drop them, or "
        "score with --metric union"
    )


def test_a_flag_both_metrics_take_is_taken_by_either(monkeypatch):
    shared = set(option_specs()["union"].names) & set(option_specs()["gruen"].names)
    assert {"device", "precision"} <= shared
    for metric in option_specs():
        args = cli.parse_args(["score", "--metric", metric, *FILES, "--device", "cpu", "--precision", "fp32"])
        assert (args.device, args.precision) == ("cpu", "fp32")
