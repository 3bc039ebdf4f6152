"""``story-quality publish-metric union|gruen --repo-id ORG/NAME [--output DIR] [--push]``.

Stages exactly what an ``evaluate`` Space holds, as evaluate's own metric Spaces do: the metric
script, its card (the Space's README, with evaluate's front matter), ``app.py`` (the page of
:mod:`story_quality.cli.space_page`, on a current gradio) and ``requirements.txt``: torch's CPU
build (a Space runs on a CPU unless given a GPU; PyPI's Linux torch is the multi-GB CUDA build) and
a package the Space's build can install:

- by default, this clone's wheel, built into the Space folder (``requirements.txt`` names the file);
- ``--package-source`` a wheel file (copied in), a source folder (its wheel built in),
  ``git+https://...@REV`` (pinned to a commit or tag), or ``story-quality-metrics==VERSION``
  (checked first: pip must find it on the index it is set up with).

A requirement no index or file satisfies is refused, so a pushed Space always builds. The shipped
default UNION checkpoint is not a Space file of its own: the package's wheel holds it. ``--push``
uploads the folder as a gradio Space through ``huggingface_hub``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from story_quality import __version__, metric_path
from story_quality.cli.errors import UsageError
from story_quality.cli.flag_spellings import subcommand
from story_quality.registry import METRICS
from story_quality.score_file.claim import refuse_unusable_name
from story_quality.versions import DISTRIBUTION

# The Hub id the cards and app.py name; a Space published elsewhere gets its own id written in.
HUB_NAMESPACE = "story-quality-metrics"
APP = """import evaluate

from story_quality.cli.space_page import launch_page

launch_page(evaluate.load("{repo_id}"))
"""
REQUIREMENTS = """# The Space runs on the installed library, as bertscore's runs on bert_score.
# torch's CPU build (a Space runs on a CPU unless given a GPU; PyPI's Linux torch is the CUDA build):
--extra-index-url {torch_index}
torch=={torch_version}+cpu
# The package: a wheel in this folder (`story-quality publish-metric` builds it in), or a pinned source.
{requirement}
"""
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# What a source tree's copy leaves out before its wheel is built (the build writes into its source).
NOT_PACKAGED = (".git", ".venv*", "outputs", "build", "dist", "__pycache__", "*.egg-info", ".ruff_cache")
SOURCE_FORMS = (
    "a wheel file, a source folder, git+https://HOST/REPO@COMMIT_OR_TAG, or "
    f"{DISTRIBUTION}==VERSION on a package index"
)


class PublishError(UsageError):
    """The Space could not be staged or pushed; the message says what to do."""


def space_files(metric: str, repo_id: str, requirement: str) -> dict[str, str]:
    """Every file of metric ``metric``'s Space published as ``repo_id``, by name, as text (the script
    named after the Space, as ``evaluate.load("ORG/NAME")`` looks for ``NAME.py``)."""
    folder = pathlib.Path(metric_path(metric))
    default_id = f"{HUB_NAMESPACE}/{metric}"
    card = (folder / "README.md").read_text(encoding="utf-8").replace(default_id, repo_id)
    return {
        # evaluate loads a Space's script by the Space's name: ORG/NAME runs NAME.py
        f"{repo_id.split('/')[1]}.py": (folder / f"{metric}.py").read_text(encoding="utf-8"),
        "README.md": card,
        "app.py": APP.format(repo_id=repo_id),
        "requirements.txt": requirements_text(requirement),
    }


def requirements_text(requirement: str) -> str:
    """The Space's ``requirements.txt``: the CPU build of the torch this package runs on, and ``requirement``."""
    torch_version = importlib.metadata.version("torch").split("+")[0]
    return REQUIREMENTS.format(
        torch_index=TORCH_CPU_INDEX, torch_version=torch_version, requirement=requirement
    )


def default_wheel_name() -> str:
    """The file name of this package's wheel, what the Space installs by default."""
    return f"{DISTRIBUTION.replace('-', '_')}-{__version__}-py3-none-any.whl"


def source_tree() -> pathlib.Path | None:
    """The clone this package runs from (its ``setup.cfg`` names the distribution), or None when it was
    installed from a wheel."""
    root = pathlib.Path(__file__).resolve().parents[2]
    setup = root / "setup.cfg"
    if setup.is_file() and re.search(rf"^name\s*=\s*{DISTRIBUTION}\s*$", setup.read_text("utf-8"), re.M):
        return root
    return None


def build_wheel(source: pathlib.Path, into: pathlib.Path) -> pathlib.Path:
    """``pip wheel --no-deps`` of a copy of ``source`` (the build writes into its source folder, and the
    user's clone is left as it is); the wheel is written into ``into``."""
    with tempfile.TemporaryDirectory(prefix="story-quality-wheel-") as scratch:
        copy = pathlib.Path(scratch) / "source"
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(*NOT_PACKAGED))
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", scratch, str(copy)]
        if int(importlib.metadata.version("setuptools").split(".")[0]) >= 71:  # bdist_wheel built in
            command.insert(4, "--no-build-isolation")
        built = subprocess.run(command, capture_output=True, text=True)
        wheels = sorted(pathlib.Path(scratch).glob("*.whl"))
        if built.returncode != 0 or len(wheels) != 1:
            last = (built.stderr.strip().splitlines() or ["no wheel written"])[-1]
            raise PublishError(f"Could not build the wheel of {source}: {last}")
        return pathlib.Path(shutil.copy2(wheels[0], into))


def check_on_index(requirement: str) -> None:
    """Refuse a ``NAME==VERSION`` that pip, set up as it is here, cannot download."""
    with tempfile.TemporaryDirectory(prefix="story-quality-index-") as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "--retries",
            "1",
            "-d",
            scratch,
        ]
        found = subprocess.run([*command, requirement], capture_output=True, text=True)
    if found.returncode != 0:
        raise PublishError(
            f"--package-source {requirement}: no package index pip is set up with has it, so the Space "
            f"could not install it; name {SOURCE_FORMS.rsplit(', or ', 1)[0]} instead (default: this "
            "clone's wheel)."
        )


def stage_package(source: str | None, space: pathlib.Path) -> str:
    """The ``requirements.txt`` line that installs the package in the Space, staging its wheel there
    when it is a file; refuses a source the Space's build could not install."""
    if source is None:
        root = source_tree()
        if root is None:
            raise PublishError(
                f"This {DISTRIBUTION} {__version__} was installed from a wheel, with no source tree to build "
                f"the Space's package from: pass --package-source ({SOURCE_FORMS})."
            )
        return f"./{build_wheel(root, space).name}"
    path = pathlib.Path(source)
    if path.is_file() and path.suffix == ".whl":
        if not canonicalize_name(path.name.split("-")[0]) == DISTRIBUTION:
            raise PublishError(f"--package-source {source}: not a wheel of {DISTRIBUTION}.")
        return f"./{shutil.copy2(path, space / path.name).name}"
    if path.is_dir():
        return f"./{build_wheel(path, space).name}"
    if source.startswith("git+"):
        if not re.search(r"@[\w.-]+$", source.split("://", 1)[-1].split("/", 1)[-1]):
            raise PublishError(
                f"--package-source {source}: not pinned; end it with @COMMIT or @TAG, so that the Space "
                "always builds the same code."
            )
        return f"{DISTRIBUTION} @ {source}"
    return pinned_release(source)


def pinned_release(source: str) -> str:
    """``NAME==VERSION`` of this distribution, checked on the index; anything else is refused."""
    try:
        requirement = Requirement(source)
    except InvalidRequirement:
        requirement = None
    pins = [spec for spec in requirement.specifier if spec.operator == "=="] if requirement else []
    if requirement is None or canonicalize_name(requirement.name) != DISTRIBUTION or len(pins) != 1:
        raise PublishError(f"--package-source {source}: no such file or folder, and not {SOURCE_FORMS}.")
    check_on_index(source)
    return source


def stage_space(
    metric: str, repo_id: str, output: pathlib.Path, package_source: str | None = None
) -> pathlib.Path:
    """Write the Space's files, and the package its ``requirements.txt`` names, into ``output`` (new, or
    empty); returns it."""
    if metric not in METRICS:
        raise PublishError(f"Unknown metric {metric!r}; this package has {', '.join(METRICS)}.")
    check_repo_id(repo_id)
    refuse_unusable_name(output, "--output", "folder")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise PublishError(f"--output {output} exists and is not an empty folder; name a new one.")
    output.mkdir(parents=True, exist_ok=True)
    requirement = stage_package(package_source, output)
    for name, text in space_files(metric, repo_id, requirement).items():
        (output / name).write_text(text, encoding="utf-8")
    return output


def check_repo_id(repo_id: str) -> None:
    """A Space id is ``ORG/NAME``, in the characters the Hub accepts (its own check)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise PublishError(f"--repo-id must be ORG/NAME (the Space's id on the Hub), got {repo_id!r}.")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        reason = str(error).split(". ")[0].rstrip(".")
        raise PublishError(f"--repo-id {repo_id!r} is not an id the Hub accepts: {reason}.") from None


def push_space(
    folder: pathlib.Path, repo_id: str, token: str | None = None, private: bool | None = None
) -> str:
    """Create the gradio Space ``repo_id`` if needed and upload ``folder``; returns the commit URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder), repo_id=repo_id, repo_type="space", commit_message="Publish the metric"
        )
    except Exception as error:  # one message, not a library traceback
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise PublishError(
            f"Could not push the Space {repo_id!r}: {type(error).__name__}: {first}. The staged files are in "
            f"{folder}; upload them later with: hf upload {repo_id} {folder} . --repo-type space"
        ) from None
    return str(getattr(commit, "commit_url", commit))


# The command's line in ``story-quality --help``.
SUMMARY = "stage (and push) a metric as an evaluate Space"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``publish-metric`` subcommand's parser."""
    parser = subcommand(commands, "publish-metric", SUMMARY, __doc__)
    parser.add_argument("metric", choices=METRICS, help="the metric to publish")
    parser.add_argument("--repo-id", required=True, help="the Space's id, ORG/NAME")
    parser.add_argument(
        "--output", type=pathlib.Path, help="folder to stage into (new or empty; default: a temporary one)"
    )
    parser.add_argument(
        "--package-source",
        metavar="SOURCE",
        help=f"what the Space installs the package from: {SOURCE_FORMS} (default: this clone's wheel, "
        "built into the Space folder)",
    )
    parser.add_argument("--push", action="store_true", help="upload the staged folder as a gradio Space")
    parser.add_argument("--token", help="Hub token (default: the one `hf auth login` stored)")
    parser.add_argument("--private", action="store_true", help="create the Space private")
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Nothing beyond argparse's own checks: the repo id is checked when the command runs."""


def run(args: argparse.Namespace) -> int:
    """Run ``story-quality publish-metric``: 0; a refusal raises (one line and 2 from
    :func:`story_quality.cli.errors.run_and_report`)."""
    output = args.output or pathlib.Path(tempfile.mkdtemp(prefix=f"{args.metric}-space-"))
    folder = stage_space(args.metric, args.repo_id, output, args.package_source)
    print(f"Staged the {args.metric} Space in {folder}", file=sys.stderr)
    if args.push:
        url = push_space(folder, args.repo_id, args.token, args.private or None)
        print(f"Pushed to {url}", file=sys.stderr)
        if args.output is None:
            shutil.rmtree(folder)
    return 0
