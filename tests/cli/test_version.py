"""``story-quality --version``: the installed package's version, as every signature names it."""

from __future__ import annotations

import pytest

from story_quality import cli
from story_quality.versions import package_version


def test_version_prints_the_package_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"story-quality {package_version()}\n"
