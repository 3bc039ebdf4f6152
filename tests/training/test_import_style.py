"""One import style in training/: absolute ``story_quality...`` imports, nothing else of its own.

``python training/NAME.py`` (the documented way to run a script) puts the script's folder first
on ``sys.path``, and ``python -m story_quality.training.NAME`` (an install without a clone) does
not: only imports through ``story_quality.training`` mean the same module both ways. A relative
import fails when its file runs as a script, ``training`` is no package once installed, and a
bare sibling name (``import corpora``) would load a second copy of the module beside the real one.
Every file is parsed (``ast``), never imported, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRAINING = REPO / "training"
UNMAPPED = "training"  # the folder's name in a clone; installed, it is story_quality.training


def own_names(folder: Path = TRAINING) -> frozenset[str]:
    """The modules and packages inside ``folder`` at any depth: names a bare import could shadow with."""
    modules = {path.stem for path in folder.rglob("*.py") if path.stem != "__init__"}
    packages = {path.parent.name for path in folder.rglob("__init__.py") if path.parent != folder}
    return frozenset(modules | packages)


def _named(lineno: int, module: str, forbidden: frozenset[str]) -> list[str]:
    top = module.split(".")[0]
    if top == UNMAPPED:
        return [f"{lineno}: imports {module} (the folder's name; import story_quality.training...)"]
    if top in forbidden:
        return [f"{lineno}: imports {module} bare (a sibling's name; import story_quality.training...)"]
    return []


def style_violations(source: str, siblings: frozenset[str] = frozenset()) -> list[str]:
    """``line: what`` for each relative import, import of ``training`` or bare import of a sibling."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append(f"{node.lineno}: relative import from {'.' * node.level}{node.module or ''}")
        elif isinstance(node, ast.ImportFrom):
            found += _named(node.lineno, node.module or "", siblings)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found += _named(node.lineno, alias.name, siblings)
    return found


def training_files() -> list[Path]:
    return sorted(TRAINING.rglob("*.py"))


def test_every_file_under_training_is_scanned():
    scanned = {path.relative_to(TRAINING).as_posix() for path in training_files()}
    assert {"train_union.py", "negatives/build.py", "shipped_assets/shipped_default.py"} <= scanned


def test_training_imports_its_own_modules_only_through_story_quality_training():
    siblings = own_names()
    found = [
        f"{path.relative_to(REPO).as_posix()}:{line}"
        for path in training_files()
        for line in style_violations(path.read_text(encoding="utf-8"), siblings)
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "from .corpora import plain_story_text",
        "from . import corruptions",
        "from ..negatives import lexicon",
        "def f():\n    from .story_lm import train_lm",
        "import training.corpora",
        "from training import corpora",
        "from training.negatives.build import build_union_dataset",
        "import corpora",
        "from negatives.lexicon import Lexicon",
    ],
)
def test_the_scan_catches_every_other_style(source):
    assert len(style_violations(source, own_names())) == 1


def test_the_scan_passes_the_one_style_and_other_projects():
    source = (
        "import datasets\nimport torch.nn\nfrom transformers import AutoTokenizer\n"
        "from story_quality.training.negatives import corruptions\n"
        "from story_quality.training.corpora import plain_story_text\nfrom story_quality.union import normalization\n"
    )
    assert style_violations(source, own_names()) == []
