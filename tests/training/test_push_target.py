"""Where a training run pushes: the Trainer's rule (the user's namespace and the output folder's name
unless ``--hub_model_id`` says otherwise), never the project's organisation, printed before training;
asked of a local stand-in Hub (``fake_hub``) through the real ``huggingface_hub`` client."""

from __future__ import annotations

import logging

import pytest
import tiny_models
from fake_hub import FakeHub, committed_files, serve
from transformers import HfArgumentParser

from story_quality.training import run_setup, train_cola, train_fluency, train_union, union_arguments
from story_quality.training.hub_push import PushError, repository_for


@pytest.fixture
def hub(monkeypatch):
    yield from serve(monkeypatch, "models", "me/my-run")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return tiny_models.save_masked_lm(tmp_path_factory.mktemp("encoder") / "bert", lowercase=True)


def union_run(encoder, output_dir, *flags: str) -> union_arguments.Run:
    return train_union.parse_run(
        ["--model_name_or_path", str(encoder), "--dataset", "pairs.jsonl", "--output_dir", str(output_dir),
         "--max_length", "48", "--report_to", "none", *flags]
    )  # fmt: skip


def uploads() -> list[str]:
    return [path for path, _, body in FakeHub.requests if path.startswith(("/api/repos", "/api/models"))]


def whoami_calls() -> list[tuple[str, str]]:
    return [(path, auth) for path, auth, _ in FakeHub.requests if path == "/api/whoami-v2"]


def test_train_union_pushes_to_the_users_namespace_under_the_output_folders_name(
    hub, encoder, tmp_path, caplog
):
    with caplog.at_level(logging.INFO):
        run = union_run(encoder, tmp_path / "my-run", "--push_to_hub", "true", "--hub_token", "hf_test")
    assert run.push and run.repo_id == "me/my-run"  # not story-quality-metrics/union-roc
    assert whoami_calls() == [("/api/whoami-v2", "Bearer hf_test")]
    assert (
        "--push_to_hub: the checkpoint will be uploaded to the Hub repository 'me/my-run' (branch 'main') "
        "once training ends." in caplog.text
    )
    assert not uploads()  # nothing created or uploaded yet
    # the push at the end goes where the line said
    (tmp_path / "my-run").mkdir(exist_ok=True)
    (tmp_path / "my-run" / "config.json").write_text("{}")
    run_setup.push_run(run.args, run.repo_id, "Upload", logging.getLogger("test"))
    commits = [(path, body) for path, _, body in FakeHub.requests if "/commit/" in path]
    assert [path for path, _ in commits] == ["/api/models/me/my-run/commit/main"]
    assert committed_files(commits[0][1]) == {"config.json": b"{}"}


def test_train_cola_pushes_to_the_users_namespace_under_the_output_folders_name(hub, tmp_path):
    parser = HfArgumentParser((train_cola.ColaArguments, train_cola.ColaTrainingArguments))
    _, args = run_setup.parse_arguments(
        parser,
        [
            "--output_dir",
            str(tmp_path / "cola-run"),
            "--push_to_hub",
            "true",
            "--hub_token",
            "hf_t",
            "--report_to",
            "none",
        ],
    )
    assert run_setup.push_target(args, logging.getLogger("test")) == (True, "me/cola-run")
    assert args.push_to_hub is False  # the Trainer does not create the repository before training


@pytest.mark.parametrize(
    ("hub_model_id", "expected", "asks"),
    [("named", "me/named", True), ("an-org/union-x", "an-org/union-x", False)],
)
def test_hub_model_id_names_the_repository_in_the_users_namespace_or_in_full(
    hub, tmp_path, hub_model_id, expected, asks
):
    assert repository_for(hub_model_id, tmp_path / "out", "hf_test", push=True) == expected
    assert bool(whoami_calls()) == asks


def test_without_push_the_hub_is_not_asked_and_the_card_names_the_folder(hub, encoder, tmp_path):
    run = union_run(encoder, tmp_path / "local-run")
    assert (run.push, run.repo_id) == (False, "local-run")
    assert not whoami_calls() and not uploads()


def test_a_user_the_hub_does_not_know_is_refused_before_training(hub, encoder, tmp_path):
    FakeHub.user = None
    with pytest.raises(PushError) as refused:
        union_run(encoder, tmp_path / "my-run", "--push_to_hub", "true", "--hub_token", "hf_bad")
    message = str(refused.value)
    assert message.startswith("--push_to_hub without a namespace in --hub_model_id pushes to your own ")
    assert "YOUR_NAME/my-run" in message and "--hub_model_id NAMESPACE/NAME" in message
    assert "\n" not in message
    assert not (tmp_path / "my-run").exists()  # refused before anything was written


def test_hub_revision_without_push_to_hub_is_refused(tmp_path, capsys):
    argv = ["--dataset", "x.jsonl", "--output_dir", str(tmp_path / "o"), "--hub_revision", "dev"]
    with pytest.raises(SystemExit) as exit_:
        train_union.main(argv)
    assert exit_.value.code == 2
    assert (
        "--hub_revision dev names the branch of a push, but --push_to_hub is not set"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("script", "flags"), [(train_union, ["--dataset", "x.jsonl"]), (train_cola, [])], ids=["union", "cola"]
)
def test_hub_model_id_without_push_to_hub_is_refused(tmp_path, capsys, script, flags):
    argv = [*flags, "--output_dir", str(tmp_path / "o"), "--hub_model_id", "me/run"]
    with pytest.raises(SystemExit) as exit_:
        script.main(argv)
    assert exit_.value.code == 2
    assert (
        "--hub_model_id me/run names the repository of a push, but --push_to_hub is not set"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("script", [train_union, train_cola, train_fluency])
def test_the_push_flags_help_says_where_and_when_a_run_pushes(script, capsys):
    with pytest.raises(SystemExit):
        script.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    push = text.split("--push_to_hub [PUSH_TO_HUB], --push-to-hub [PUSH_TO_HUB] ")[1].split(" --hub_token")[0]
    assert push.startswith("Upload the finished output folder") and "once, after training" in push
    assert "--hub_model_id names (default: YOUR_NAME/<output folder's name>)" in push
    assert "every time" not in push and "every save" not in push  # the Trainer's own line is not ours
    assert "Only 'end' is accepted" in text and "(default: end)" in text


def test_a_strategy_other_than_end_is_refused_in_either_spelling(encoder, tmp_path, capsys):
    for flag in ("--hub_strategy", "--hub-strategy"):
        with pytest.raises(SystemExit):
            union_run(encoder, tmp_path / "o", flag, "every_save")
        assert "--hub_strategy every_save is not supported" in capsys.readouterr().err
