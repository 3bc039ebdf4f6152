"""``story-quality publish-metric union|gruen --repo-id ORG/NAME [--output DIR] [--push]``.

Stages exactly what an ``evaluate`` Space holds, as evaluate's own metric Spaces do: the metric
script, its card (the Space's README, with evaluate's front matter), ``app.py`` (evaluate's
gradio widget) and ``requirements.txt`` pinning this release of the package by its distribution
name. The shipped default is left out: the Space installs the package, whose package
data holds it. ``--push`` uploads the folder as a gradio Space through ``huggingface_hub``.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import tempfile

from story_quality import METRICS, __version__, metric_path, output_files
from story_quality.cli.errors import UsageError
from story_quality.signature import DISTRIBUTION

# The Hub id the cards and app.py name; a Space published elsewhere gets its own id written in.
HUB_NAMESPACE = "story-quality-metrics"
APP = """import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{repo_id}")
launch_gradio_widget(module)
"""
REQUIREMENTS = """# The Space runs on the installed library, as bertscore's runs on bert_score.
{distribution}=={version}
"""


class PublishError(UsageError):
    """The Space could not be staged or pushed; the message says what to do."""


def space_files(metric: str, repo_id: str) -> dict[str, str]:
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
        "requirements.txt": REQUIREMENTS.format(distribution=DISTRIBUTION, version=__version__),
    }


def stage_space(metric: str, repo_id: str, output: pathlib.Path) -> pathlib.Path:
    """Write the Space's files into ``output`` (new, or empty); returns it."""
    if metric not in METRICS:
        raise PublishError(f"Unknown metric {metric!r}; this package has {', '.join(METRICS)}.")
    check_repo_id(repo_id)
    output_files.refuse_unusable_name(output, "--output", "folder")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise PublishError(f"--output {output} exists and is not an empty folder; name a new one.")
    output.mkdir(parents=True, exist_ok=True)
    for name, text in space_files(metric, repo_id).items():
        (output / name).write_text(text, encoding="utf-8")
    return output


def check_repo_id(repo_id: str) -> None:
    """A Space id is ``ORG/NAME``."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise PublishError(f"--repo-id must be ORG/NAME (the Space's id on the Hub), got {repo_id!r}.")


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


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``publish-metric`` subcommand's parser."""
    parser = commands.add_parser(
        "publish-metric",
        help="stage (and push) a metric as an evaluate Space",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("metric", choices=METRICS, help="the metric to publish")
    parser.add_argument("--repo-id", required=True, help="the Space's id, ORG/NAME")
    parser.add_argument(
        "--output", type=pathlib.Path, help="folder to stage into (new or empty; default: a temporary one)"
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
    folder = stage_space(args.metric, args.repo_id, output)
    print(f"Staged the {args.metric} Space in {folder}", file=sys.stderr)
    if args.push:
        url = push_space(folder, args.repo_id, args.token, args.private or None)
        print(f"Pushed to {url}", file=sys.stderr)
        if args.output is None:
            shutil.rmtree(folder)
    return 0
