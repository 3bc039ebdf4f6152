"""Imports point one way: the library stands alone, training leans only on it, nothing on experiments;
inside the library the commands sit on top, the metrics and the evaluation statistics beside each
other, and the command line starts without torch. No module imports itself through others (no
import circle), so every import runs down.

Every module is parsed (``ast``), never imported, so an import inside a function or behind a
condition counts as much as one at the top, and a module that fails to import is still checked.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Where each folder lives once installed: story_quality/ links training/, metrics/ and hub_cards/
# under story_quality; benchmarks/ and experiments/ stay top-level packages of a clone.
PACKAGE_OF_FOLDER = {
    "story_quality": "story_quality",
    "training": "story_quality.training",
    "metrics": "story_quality.metrics",
    "hub_cards": "story_quality.hub_cards",
    "benchmarks": "benchmarks",
    "experiments": "experiments",
    "tests": "tests",
}
NOT_FOR_THE_LIBRARY = (
    "training",
    "benchmarks",
    "experiments",
    "story_quality.training",
    "story_quality.benchmarks",
    "story_quality.experiments",
)
NOT_FOR_TRAINING = ("benchmarks", "experiments", "story_quality.benchmarks", "story_quality.experiments")
NOT_FOR_ANYONE = ("experiments", "story_quality.experiments")


def module_name(path: Path) -> str:
    """The dotted name ``path`` has once installed (``training/x.py`` -> ``story_quality.training.x``)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    package = PACKAGE_OF_FOLDER[parts[0]]
    rest = [part for part in parts[1:] if part != "__init__"]
    return ".".join([package, *rest])


def imported_modules(source: str, name: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``source``, relative ones resolved from ``name``.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a module); a call to
    ``importlib.import_module`` or ``__import__`` with a literal name counts as an import.
    """
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute_base(node, package)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
        elif literal_import(node) is not None:
            found.append((node.lineno, literal_import(node)))
    return found


def literal_import(node: ast.AST) -> str | None:
    """The module a call of ``importlib.import_module`` or ``__import__`` with a literal name imports."""
    if (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
        )
    ):
        return node.args[0].value
    return None


def absolute_base(node: ast.ImportFrom, package: str) -> str:
    """The module ``from BASE import ...`` names, a relative one resolved from ``package``."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def is_under(module: str, forbidden: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in forbidden)


def violations(folders: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    """``file:line imports module`` for every import in ``folders`` of a module under ``forbidden``."""
    found = []
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            name = module_name(path)
            source = path.read_text(encoding="utf-8")
            for line, module in imported_modules(source, name, path.name == "__init__.py"):
                if is_under(module, forbidden):
                    found.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    return sorted(set(found))


def test_the_library_imports_nothing_from_training_benchmarks_or_experiments():
    assert violations(("story_quality",), NOT_FOR_THE_LIBRARY) == []


def test_the_metric_scripts_stand_on_the_library_alone():
    assert violations(("metrics",), NOT_FOR_THE_LIBRARY) == []


def test_training_imports_nothing_from_benchmarks_or_experiments():
    assert violations(("training",), NOT_FOR_TRAINING) == []


def test_nothing_in_the_product_benchmarks_or_tests_imports_experiments():
    folders = ("story_quality", "metrics", "training", "hub_cards", "benchmarks", "tests")
    assert violations(folders, NOT_FOR_ANYONE) == []


def test_nothing_in_the_library_imports_the_commands_but_the_commands():
    found = violations(("story_quality",), ("story_quality.cli",))
    assert [
        line for line in found if not line.startswith(("story_quality/cli/", "story_quality/__main__.py"))
    ] == []


def test_the_metrics_import_neither_each_other_nor_the_evaluation():
    assert violations(("story_quality/union",), ("story_quality.gruen", "story_quality.evaluation")) == []
    assert violations(("story_quality/gruen",), ("story_quality.union", "story_quality.evaluation")) == []


def test_the_evaluation_statistics_stand_below_the_commands_and_the_scorers():
    forbidden = ("story_quality.cli", "story_quality.union.scorer", "story_quality.gruen")
    assert violations(("story_quality/evaluation",), forbidden) == []


TORCH_FREE = ("story_quality.cli", "story_quality.evaluation.comparison", "story_quality.union.options",
              "story_quality.gruen.options", "story_quality.signature", "story_quality.cli.option_tables",
              "story_quality.cli.meta_evaluate", "story_quality.cli.meta_plot",
              "story_quality.evaluation.meta_evaluation")  # fmt: skip


def test_the_command_line_and_the_option_specs_start_without_torch():
    """``story-quality --help``, ``compare`` and ``meta-evaluate`` build their parsers and read score files
    without torch or transformers (seconds of import each); only scoring imports them."""
    probe = f"import sys; import {', '.join(TORCH_FREE)}; print(sorted({{'torch', 'transformers', 'evaluate', 'nltk'}} & set(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("source", "name", "is_package", "expected"),
    [
        ("import training.corpora", "story_quality.cli", False, "training.corpora"),
        (
            "from story_quality.training import corpora",
            "story_quality.cli",
            False,
            "story_quality.training.corpora",
        ),
        ("from .training.corpora import f", "story_quality.cli", False, "story_quality.training.corpora"),
        ("from ..training import corpora", "story_quality.union.x", False, "story_quality.training.corpora"),
        ("from . import training", "story_quality", True, "story_quality.training"),
        ("def f():\n    import benchmarks.machine", "story_quality.cli", False, "benchmarks.machine"),
        ("importlib.import_module('experiments.x')", "story_quality.cli", False, "experiments.x"),
    ],
)
def test_the_scan_catches_every_form_of_import(source, name, is_package, expected):
    modules = [module for _, module in imported_modules(source, name, is_package)]
    assert expected in modules
    assert is_under(expected, NOT_FOR_THE_LIBRARY)


def test_the_scan_resolves_sibling_imports_without_false_alarms():
    modules = [m for _, m in imported_modules("from . import metrics, union", "story_quality", True)]
    assert modules == ["story_quality", "story_quality.metrics", "story_quality.union"]
    assert not any(is_under(module, NOT_FOR_THE_LIBRARY) for module in modules)
    assert not is_under("story_quality.trainingwheels", NOT_FOR_THE_LIBRARY)
    assert module_name(REPO / "training" / "negatives" / "__init__.py") == "story_quality.training.negatives"


# The project's own code, every folder but the tests: an import circle anywhere in it is refused.
CODE_FOLDERS = ("story_quality", "training", "metrics", "hub_cards", "benchmarks", "experiments")


def module_files() -> dict[str, Path]:
    """Every module of :data:`CODE_FOLDERS` by its dotted name (a package by its ``__init__.py``)."""
    return {
        module_name(path): path for folder in CODE_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
    }


def module_imports(source: str, name: str, is_package: bool, modules: set[str]) -> set[tuple[int, str]]:
    """(line, module) for every module of ``modules`` that ``source`` imports, anywhere in it (in a
    function, under ``TYPE_CHECKING``, by ``importlib.import_module``): ``from package import module``
    imports the module, ``from module import name`` the module, ``import a.b`` the module ``a.b``."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = absolute_base(node, package)
            for alias in node.names:
                found.add(
                    (node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
                )
        elif isinstance(node, ast.Import):  # ``import a.b.c``: the longest of a.b.c, a.b, a that is a module
            for alias in node.names:
                parts = alias.name.split(".")
                named = [".".join(parts[:k]) for k in range(len(parts), 0, -1)]
                found.add((node.lineno, next((m for m in named if m in modules), alias.name)))
        elif literal_import(node) is not None:
            found.add((node.lineno, literal_import(node)))
    return {(line, module) for line, module in found if module in modules and module != name}


def import_graph() -> dict[str, dict[str, list[str]]]:
    """Each module's imports of the project's modules: ``{module: {imported: ["file:line", ...]}}``."""
    files = module_files()
    graph: dict[str, dict[str, list[str]]] = {}
    for name, path in files.items():
        source = path.read_text(encoding="utf-8")
        edges: dict[str, list[str]] = {}
        for line, module in sorted(module_imports(source, name, path.name == "__init__.py", set(files))):
            edges.setdefault(module, []).append(f"{path.relative_to(REPO)}:{line}")
        graph[name] = edges
    return graph


def circles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan's algorithm),
    each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.get(module, {}):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def described(circle: list[str], graph: dict[str, dict[str, list[str]]]) -> str:
    """A circle as its modules and the imports that tie them (``file:line imports module``)."""
    ties = [f"    {where} imports {imported}" for module in circle for imported, lines in graph[module].items()
            if imported in circle for where in lines]  # fmt: skip
    return " <-> ".join(circle) + "\n" + "\n".join(ties)


def test_no_module_imports_itself_through_others():
    """No import circle, counting the imports inside functions and under ``TYPE_CHECKING`` (a lazy
    import still ties two modules for whoever reads them): a name two modules need lives below both."""
    graph = import_graph()
    found = circles(graph)
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(described(c, graph) for c in found)


def test_the_circle_check_sees_every_kind_of_import():
    modules = {"p", "p.a", "p.b", "p.c", "p.d"}
    source = "from p import a\nfrom p.b import name\nimport p.c\ndef f():\n    from . import d\n"
    found = module_imports(source, "p.x", False, modules)
    assert sorted(module for _, module in found) == ["p.a", "p.b", "p.c", "p.d"]
    assert module_imports("import p.c.name, os", "p.x", False, modules) == {(1, "p.c")}
    assert module_imports("from p import name", "p.x", False, modules) == {(1, "p")}
    graph = {"a": {"b": ["a.py:1"]}, "b": {"c": ["b.py:3"]}, "c": {"a": ["c.py:9"]}, "d": {"a": ["d.py:1"]}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b": []}, "b": {}}) == []
