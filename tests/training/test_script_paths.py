"""One way to run each training script in a clone: by its path, ``python training/NAME.py`` (and the
launchers, ``accelerate launch`` / ``torchrun``, with the same path).

Running a file by its path puts the file's folder first on ``sys.path`` and the repository root
not at all, so the script must reach everything through the installed ``story_quality`` package.
One process runs every script's ``--help`` as ``python PATH --help`` would (``runpy``, the script's
folder first on the path): a process each would cost several seconds of imports apiece.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import contextlib, io, json, pathlib, runpy, sys
results = {}
for script in json.loads(sys.argv[1]):
    sys.path[0] = str(pathlib.Path(script).parent.resolve())  # what python PATH puts first
    sys.argv = [script, "--help"]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(script, run_name="__main__")
        code = "returned without printing help"
    except SystemExit as stop:
        code = stop.code or 0
    except Exception as error:
        code = repr(error)
    results[script] = [code, printed.getvalue()[:300]]
print(json.dumps(results))
"""


def scripts() -> list[str]:
    """Every file under training/ that runs as a script (it has a ``__main__`` block), repo-relative."""
    return sorted(
        path.relative_to(REPO).as_posix()
        for path in (REPO / "training").rglob("*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    )


def test_every_script_shows_its_help_when_run_by_its_path():
    found = scripts()
    assert {"training/train_union.py", "training/shipped_assets/human_scale_table.py"} <= set(found)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(found)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    results = json.loads(result.stdout.strip().splitlines()[-1])
    failed = {script: code for script, (code, _) in results.items() if code != 0}
    assert failed == {}
    for script, (_, printed) in results.items():
        assert printed.startswith(f"usage: {Path(script).name}"), script
