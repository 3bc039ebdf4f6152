"""No function or method over 80 lines outside experiments/: a longer one does several things.

Every module is parsed (``ast``), never imported. A function's length runs from its ``def`` line
to its last line (decorators excluded); a function nested in another counts on its own and as
part of the one that holds it.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("story_quality", "metrics", "training", "benchmarks", "tests")
MAX_LINES = 80


def long_functions(path: Path, root: Path = REPO) -> list[str]:
    """``path:line name (N lines)`` for every function or method in ``path`` over ``MAX_LINES``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(root).as_posix()
    return [
        f"{where}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]


def python_files() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (REPO / folder).rglob("*.py"))


def test_the_walk_finds_the_packages_and_measures_from_the_def_line(tmp_path):
    assert {path.relative_to(REPO).parts[0] for path in python_files()} == set(FOLDERS)
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    (tmp_path / "fits.py").write_text("@decorated\n@twice\ndef fits():\n" + body)
    (tmp_path / "long.py").write_text(
        "class A:\n    def long(self):\n" + body.replace("    ", "        ") + "        y = 0\n"
    )
    assert long_functions(tmp_path / "fits.py", tmp_path) == []
    assert long_functions(tmp_path / "long.py", tmp_path) == [f"long.py:2 long ({MAX_LINES + 1} lines)"]


def test_no_function_is_longer_than_80_lines():
    too_long = [found for path in python_files() for found in long_functions(path)]
    assert not too_long, "split these functions (at most 80 lines each):\n" + "\n".join(too_long)
