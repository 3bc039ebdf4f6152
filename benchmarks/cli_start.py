"""How long ``story-quality --help`` and ``story-quality compare`` take to start, and what they import.

    python -m benchmarks.cli_start                       # this checkout
    python -m benchmarks.cli_start --source OTHER_CHECKOUT   # another checkout's library, for a before/after

Each command runs ``--runs`` times as a fresh process (``python -m story_quality ...``); the
median and the fastest wall time are printed, with whether torch, transformers or evaluate were
imported. ``compare`` reads two score files of 1,000 rows each (written here, with the signature
``story-quality score`` writes) with 1,000 resamples. ``--source`` puts another checkout's
``story_quality`` first on ``PYTHONPATH`` (its own files, this environment's packages).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from benchmarks.machine import describe_machine
from story_quality.cli.flag_spellings import ScriptParser

SIGNATURE = "union|v0.4.0|checkpoint:default@sha256:0123456789ab|norm:none|window:256|long:windows|fp32"
HEAVY = ("torch", "transformers", "evaluate")
PROBE = f"""
import runpy, sys
sys.argv = ["story-quality", *sys.argv[1:]]
try:
    runpy.run_module("story_quality", run_name="__main__")
    code = 0
except SystemExit as stop:
    code = stop.code or 0
print("IMPORTED", sorted(set({HEAVY!r}) & set(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def write_scores(folder: pathlib.Path, rows: int) -> list[str]:
    """Two score files as ``story-quality score`` writes them (unsealed rows, the signature first)."""
    paths = []
    for system, shift in (("a", 0.0), ("b", 0.02)):
        path = folder / f"{system}.jsonl"
        lines = [
            {"index": i, "line": i + 1, "union": round((i * 7919 % 1000) / 1000 * 0.9 + shift, 6)}
            for i in range(rows)
        ]
        lines[0]["signature"] = SIGNATURE
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(str(path))
    return paths


def time_command(
    arguments: Sequence[str], runs: int, source: str | None, folder: str
) -> tuple[list[float], str]:
    """Wall seconds of each run (in ``folder``, so that no checkout is first on the path but
    ``source``), and what the last run imported of :data:`HEAVY`; a run that fails is an error."""
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    seconds, imported = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *arguments], env=env, cwd=folder, capture_output=True, text=True
        )
        seconds.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(f"story-quality {' '.join(arguments[:1])} failed: {done.stderr[-500:]}")
        imported = next(
            (line for line in done.stderr.splitlines() if line.startswith("IMPORTED")), done.stderr
        )
    return seconds, imported.removeprefix("IMPORTED ")


def main(argv: Sequence[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command (7)")
    parser.add_argument("--source", help="another checkout whose story_quality is timed instead")
    args = parser.parse_args(argv)
    print(describe_machine())
    with tempfile.TemporaryDirectory(prefix="cli-start-") as folder:
        files = write_scores(pathlib.Path(folder), 1000)
        commands = {
            "story-quality --help": ["--help"],
            "story-quality compare (2 x 1,000 rows)": ["compare", *files, "--resamples", "1000"],
        }
        for name, arguments in commands.items():
            seconds, imported = time_command(arguments, args.runs, args.source, folder)
            print(
                f"{name}: median {statistics.median(seconds):.2f} s, fastest {min(seconds):.2f} s "
                f"over {args.runs} runs; imported of {', '.join(HEAVY)}: {imported}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
