"""The README's set-up lines hold on a fresh machine anywhere: torch's CPU build from PyTorch's CPU index, as .ci/run takes it."""

from __future__ import annotations

import re

from conftest import REPO


def test_the_readme_installs_torchs_cpu_build_from_the_index_ci_falls_back_to():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = re.search(r"## Set up and test\n.*?```bash\n(.*?)```", readme, re.S).group(1)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    pin = re.search(r"^TORCH=(\S+)$", ci, re.M).group(1)
    index = re.search(r"^TORCH_CPU_INDEX=(\S+)$", ci, re.M).group(1)
    assert index == "https://download.pytorch.org/whl/cpu"
    first = setup.splitlines()[0]
    assert first.split("#")[0].split() == ["pip", "install", pin, "--index-url", index]
    # .ci/run installs torch only through the function that picks the CPU build, in both environments
    assert re.findall(r"pip install -q torch", ci) == []
    assert len(re.findall(r"^install_cpu_torch \S+$", ci, re.M)) == 2
    assert '"$TORCH" --index-url "$TORCH_CPU_INDEX"' in ci
    version = pin.removeprefix("torch==")
    assert f'"version": "{re.escape(version)}+cpu"' in ci
