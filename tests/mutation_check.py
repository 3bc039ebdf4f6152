"""Does the suite still bite? Plant known bugs in a temporary copy of the repository, expect failures.

Each mutation below is a bug the suite once let through (issue 17) or a constant of the
papers. For each one the script copies the repository (tracked and untracked, not ignored,
files) to a temporary folder once, writes the mutated file, runs pytest there and puts the
file back. A mutation is *caught* when pytest fails; one that passes has *survived*, and the
script exits non-zero. The working tree is never touched.

    python tests/mutation_check.py                 # each mutation against the test files listed for it
    python tests/mutation_check.py --full          # each mutation against the whole suite (slow)
    python tests/mutation_check.py --list          # the mutations and their test files
    python tests/mutation_check.py focus-penalty union-label-ignored   # only these

Before the mutations, the same test files run on the unmutated copy (``--no-baseline`` skips
it): a failure there would make every "caught" meaningless. Run it with ``nice`` on a shared
machine; with the default subsets it takes a few minutes.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from planted_bugs import IN_THE_METRICS, Mutation  # noqa: F401 (Mutation for callers)
from planted_bugs_commands import IN_THE_COMMANDS

REPO = pathlib.Path(__file__).resolve().parents[1]
MUTATIONS = [*IN_THE_METRICS, *IN_THE_COMMANDS]


def repository_files(root: pathlib.Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files (what a fresh clone plus local work holds)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode()
        names = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist", "outputs"}
        names = [
            str(path.relative_to(root))
            for path in root.rglob("*")
            if (path.is_file() or path.is_symlink()) and not skip & set(path.relative_to(root).parts)
        ]
    return sorted(name for name in set(names) if (root / name).is_file() or (root / name).is_symlink())


def copy_repository(root: pathlib.Path, target: pathlib.Path) -> None:
    """Copy the tracked files, the links in story_quality/ to the repository's folders as links, so
    that the copy (on PYTHONPATH) is the package that runs, whole."""
    for name in repository_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination, follow_symlinks=False)


def check_imports_come_from(copy: pathlib.Path, env: dict[str, str]) -> None:
    """The copy's packages, not the editable install's, must be the ones imported there."""
    probe = (
        "import story_quality.metrics as m, story_quality.training as t; print(m.__file__); print(t.__file__)"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True)
    paths = out.stdout.split()
    if (
        out.returncode != 0
        or not paths
        or not all(pathlib.Path(p).resolve().is_relative_to(copy.resolve()) for p in paths)
    ):
        raise SystemExit(f"the copy's packages are not the ones imported: {out.stdout}{out.stderr}")


def run_pytest(copy: pathlib.Path, tests: list[str], env: dict[str, str], timeout: int) -> tuple[int, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout} s"
    lines = (done.stdout + done.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return done.returncode, (failed[:1] or lines[-1:] or [""])[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--full", action="store_true", help="run the whole suite for every mutation")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per pytest run (default 1800)")
    args = parser.parse_args(argv)
    known = {m.name: m for m in MUTATIONS}
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"unknown mutation(s) {unknown}; --list shows them")
    chosen = [known[name] for name in args.names] if args.names else MUTATIONS
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.what}\n    {m.path}; caught by {', '.join(m.tests)}")
        return 0

    with tempfile.TemporaryDirectory(prefix="mutation-check-") as folder:
        copy = pathlib.Path(folder) / "repo"
        copy_repository(REPO, copy)
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")]))
        )
        check_imports_come_from(copy, env)
        for m in chosen:  # every mutation must still apply to today's code
            count = (copy / m.path).read_text().count(m.old)
            if count != 1:
                raise SystemExit(f"{m.name}: the text to change occurs {count} times in {m.path}, not once")

        def tests_of(mutations) -> list[str]:
            return ["tests"] if args.full else list(dict.fromkeys(t for m in mutations for t in m.tests))

        if not args.no_baseline:
            start = time.monotonic()
            code, summary = run_pytest(copy, tests_of(chosen), env, args.timeout)
            print(
                f"baseline (no mutation): exit {code} in {time.monotonic() - start:.0f} s: {summary}",
                flush=True,
            )
            if code != 0:
                print("the unmutated tests fail: fix that first")
                return 2
        survived = []
        for m in chosen:
            path = copy / m.path
            original = path.read_text()
            path.write_text(original.replace(m.old, m.new))
            start = time.monotonic()
            try:
                code, summary = run_pytest(copy, tests_of([m]), env, args.timeout)
            finally:
                path.write_text(original)
            verdict = "caught" if code in (1, 2) else "SURVIVED" if code == 0 else f"error (exit {code})"
            print(f"{m.name}: {verdict} in {time.monotonic() - start:.0f} s: {summary}", flush=True)
            if verdict != "caught":
                survived.append(m.name)
        print(f"{len(chosen) - len(survived)} of {len(chosen)} mutations caught")
        if survived:
            print("not caught: " + ", ".join(survived))
        return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
