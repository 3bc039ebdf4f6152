"""The human scale (``percentiles="human-roc"|"human-wp"``): percentiles among a checkpoint's held-back human
stories, from a pinned table; a held-back story's percentile does not move with its batch (issue 47)."""

from __future__ import annotations

import json
import pathlib
import shutil

import evaluate
import numpy as np
import pytest
from tiny_models import roc_union_checkpoint, save_union_checkpoint

from story_quality import cli
from story_quality.checkpoints.files import weights_sha256
from story_quality.checkpoints.reference import CheckpointReference
from story_quality.signature import Signature
from story_quality.union import human_scale
from story_quality.union.checkpoints import shipped_default_dir
from story_quality.union.normalization import ROC_STORIES

REPO = pathlib.Path(__file__).resolve().parents[2]
METRIC = str(REPO / "metrics" / "union")
HUMAN_ROC = [
    "Ken went to the store. He bought milk. He went home happy.",
    "Mary didn't like the new car. She sold it to her friend.",
    "I played with my friends after school. We ran and ran. Then we ate.",
    "The old man walked his dog every day. One day the dog found a cat. They became friends.",
    "She was sad. Her friend came to the house. They played and she was happy.",
    "He lost his car. He walked to school. A friend found the car.",
]
HUMAN_WP = [
    "A dog rules the world.\nThe dog was the king. Every man and woman did what he said.",
    "You find a new house.\nI went to the house at night. It was very old. I was not happy.",
    "The last day of school.\nWe ran home. Then we ate and played all night.",
]
STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",  # also a human story: a tie
    "the dog ran to the school . the cat ate .",
    "He was sad.",
    "She ran to the park. She ran home. She ran to the park.",
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory, name="tiny-union")


@pytest.fixture(scope="module")
def metric(checkpoint):
    evaluate.logging.disable_progress_bar()
    return evaluate.load(METRIC, str(checkpoint))


@pytest.fixture(scope="module")
def table(metric, checkpoint, tmp_path_factory) -> tuple[pathlib.Path, str, dict[str, list[float]]]:
    """A table for the tiny checkpoint, written as training/shipped_assets/human_scale_table.py writes the shipped one."""
    roc, wp = (metric.compute(predictions=stories) for stories in (HUMAN_ROC, HUMAN_WP))
    path = tmp_path_factory.mktemp("tables") / "tiny-union.json"
    sha = human_scale.write_table(
        path,
        roc["signature"],
        weights_sha256(checkpoint),
        {"roc": ("six ROC stories", roc["scores"]), "wp": ("three WP stories", wp["scores"])},
        "written by the test",
    )
    return path, sha, {"roc": roc["scores"], "wp": wp["scores"]}


@pytest.fixture
def registered(table, monkeypatch):
    path, sha, scores = table
    monkeypatch.setitem(human_scale.TABLES, "tiny-union", human_scale.TableEntry(path, sha))
    return scores


def slow_percentile(score: float, human: list[float]) -> float:
    """Ties within 1e-5 (human_scale.TIE_TOLERANCE): a table holds scores rounded to 6 decimals."""
    below = sum(1 for h in human if h < score - 1e-5)
    ties = sum(1 for h in human if abs(h - score) <= 1e-5)
    return 100 * (below + ties / 2) / len(human)


@pytest.mark.parametrize(("scale", "domain"), [("human-roc", "roc"), ("human-wp", "wp")])
def test_percentiles_equal_the_slow_count_beside_the_raw_scores(metric, registered, table, scale, domain):
    plain = metric.compute(predictions=STORIES)
    result = metric.compute(predictions=STORIES, percentiles=scale)
    assert result["scores"] == plain["scores"] and result["union_score"] == plain["union_score"]
    human = [round(s, 6) for s in registered[domain]]
    assert result["percentiles"] == pytest.approx([slow_percentile(s, human) for s in plain["scores"]])
    assert result["signature"] == f"{plain['signature']}|{scale}:sha256:{table[1][:12]}"
    assert "percentiles" not in plain


def test_percentile_ranks_count_ties_half_as_the_slow_count_does():
    rng = np.random.default_rng(0)
    human = rng.integers(0, 6, 40) / 5  # many ties
    scores = np.concatenate([rng.integers(0, 6, 30) / 5, [-1.0, 2.0]])
    expected = [slow_percentile(s, list(human)) for s in scores]
    assert human_scale.percentile_ranks(scores, human).tolist() == pytest.approx(expected, abs=1e-12)
    assert expected[-2:] == [0.0, 100.0]


def test_a_tampered_table_is_refused_before_any_work(metric, table, tmp_path, monkeypatch):
    path, sha, _ = table
    tampered = tmp_path / "tiny-union.json"
    record = json.loads(path.read_text())
    record["domains"]["roc"]["scores"][0] = 0.999
    tampered.write_text(json.dumps(record, indent=1) + "\n")
    monkeypatch.setitem(human_scale.TABLES, "tiny-union", human_scale.TableEntry(tampered, sha))

    def no_work(*args):
        raise AssertionError("a story was scored before the table was checked")

    monkeypatch.setattr(metric.scorer, "logits_fn", no_work)
    with pytest.raises(human_scale.HumanScaleError, match=r"tiny-union\.json is damaged or was changed"):
        metric.compute(predictions=STORIES, percentiles="human-roc")


def test_a_checkpoint_without_a_table_names_it_and_the_tables_there_are(metric):
    with pytest.raises(human_scale.HumanScaleError, match=r"'tiny-union'.*tables exist for 'default'"):
        metric.compute(predictions=STORIES, percentiles="human-roc")


def test_another_checkpoint_of_the_same_name_does_not_take_the_table(registered, tmp_path):
    other = save_union_checkpoint(
        tmp_path / "tiny-union", normalization=ROC_STORIES.to_dict(), max_length=48, seed=1
    )
    with pytest.raises(human_scale.HumanScaleError, match="was made with tiny-union@sha256"):
        evaluate.load(METRIC, str(other)).compute(predictions=STORIES, percentiles="human-roc")


def test_other_weights_under_the_same_label_are_refused(checkpoint, registered, table, tmp_path):
    copy = shutil.copytree(checkpoint, tmp_path / "copy" / "tiny-union")
    signature = Signature.parse(table_signature(table[0]))
    assert (
        human_scale.human_scale_for_call("human-roc", signature, CheckpointReference.parse(str(copy))).sha256
        == table[1]
    )
    (copy / "model.safetensors").write_bytes((copy / "model.safetensors").read_bytes()[:-4] + b"\0\0\0\1")
    with pytest.raises(human_scale.HumanScaleError, match="has other weights"):
        human_scale.human_scale_for_call("human-roc", signature, CheckpointReference.parse(str(copy)))


def table_signature(path: pathlib.Path) -> str:
    return json.loads(path.read_text())["signature"]


def test_another_reading_of_the_stories_is_refused(metric, registered):
    with pytest.raises(human_scale.HumanScaleError, match=r"reads them differently \(window:40\)"):
        metric.compute(predictions=STORIES, percentiles="human-roc", max_length=40)


@pytest.mark.parametrize("scale", ["human", "roc", 1])
def test_an_unknown_scale_is_named(metric, registered, scale):
    with pytest.raises(ValueError, match="percentiles must be one of"):
        metric.compute(predictions=STORIES, percentiles=scale)


def test_the_cli_writes_each_rows_percentile(checkpoint, registered, metric, tmp_path):
    source, output = tmp_path / "stories.txt", tmp_path / "scores.jsonl"
    source.write_text("\n".join(STORIES) + "\n")
    args = ["score", "--metric", "union", "--input", str(source), "--output", str(output)]
    assert cli.main([*args, "--checkpoint", str(checkpoint), "--percentiles", "human-wp"]) == 0
    rows = [json.loads(line) for line in output.read_text().splitlines() if line.strip()]
    expected = metric.compute(predictions=STORIES, percentiles="human-wp")
    assert [row["percentile"] for row in rows if "index" in row] == pytest.approx(expected["percentiles"])
    assert rows[0]["signature"] == expected["signature"]


def test_the_shipped_table_belongs_to_the_shipped_checkpoint():
    entry = human_scale.TABLES["default"]
    table = human_scale.load_table(entry.path, entry.sha256)
    folder = shipped_default_dir()
    assert table.weights_sha256 == weights_sha256(folder)
    assert table.checkpoint == CheckpointReference.folder("default", folder).label()
    assert human_scale.human_scale_for(table.checkpoint) is table
    assert {name: len(scores) > 300 for name, scores in table.domains.items()} == {"roc": True, "wp": True}


def test_the_shipped_table_is_package_data():
    setup = (REPO / "setup.cfg").read_text()
    assert "human_scale_tables/*.json" in setup
    assert human_scale.TABLE_FOLDER.name == "human_scale_tables"


def test_the_cli_refuses_percentiles_for_gruen(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORIES) + "\n")
    arguments = [
        "score",
        "--metric",
        "gruen",
        "--input",
        str(source),
        "--output",
        str(tmp_path / "out.jsonl"),
    ]
    with pytest.raises(SystemExit) as exit_status:
        cli.main([*arguments, "--percentiles", "human-roc"])
    assert (
        exit_status.value.code == 2
        and "--percentiles is an option of union, not of gruen" in capsys.readouterr().err
    )
    assert not (tmp_path / "out.jsonl").exists()


def test_a_held_back_storys_percentile_does_not_move_with_its_batch():
    rng = np.random.default_rng(0)
    exact = rng.uniform(0, 1, 200)  # the stories' scores as the table's run computed them
    table = np.round(exact, 6)  # as write_table stores them
    alone = human_scale.percentile_ranks(exact, table)
    for batch_noise in (-2e-6, -3e-7, 4e-7, 3e-6):  # the same stories beside other batch-mates
        moved = human_scale.percentile_ranks(exact + batch_noise, table)
        assert moved.tolist() == alone.tolist()
    assert set(alone.tolist()) == {100 * (k + 0.5) / 200 for k in range(200)}  # each ties its own entry


def test_the_old_name_rescale_is_taken_for_one_version_with_a_warning(
    metric, registered, checkpoint, tmp_path, capsys
):
    expected = metric.compute(predictions=STORIES, percentiles="human-roc")
    with pytest.warns(FutureWarning, match=r"rescale= is now called percentiles=") as caught:
        assert metric.compute(predictions=STORIES, rescale="human-roc") == expected
    assert [pathlib.Path(warning.filename).name for warning in caught] == [pathlib.Path(__file__).name]
    with pytest.warns(FutureWarning, match=r"rescale= is now called percentiles="):
        assert metric.scorer.score(STORIES, rescale="human-roc").as_dict() == expected
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORIES) + "\n")
    rows, warned = {}, {}
    for flag in ("--percentiles", "--rescale"):
        output = tmp_path / f"{flag[2:]}.jsonl"
        arguments = ["score", "--metric", "union", "--input", str(source), "--output", str(output)]
        capsys.readouterr()
        assert cli.main([*arguments, "--checkpoint", str(checkpoint), flag, "human-wp"]) == 0
        warned[flag] = "warning: --rescale is now called --percentiles" in capsys.readouterr().err
        records = [json.loads(line) for line in output.read_text().splitlines() if line.strip()]
        rows[flag] = [
            (row["percentile"], row["signature"] if "signature" in row else None)
            for row in records
            if "index" in row
        ]
    assert warned == {"--percentiles": False, "--rescale": True}
    assert rows["--rescale"] == rows["--percentiles"] and rows["--percentiles"][0][0] is not None


def test_an_option_under_its_old_and_new_name_at_once_is_refused(metric, registered, tmp_path, capsys):
    with pytest.raises(TypeError, match=r"got both 'rescale' and 'percentiles'.*pass percentiles= only"):
        metric.compute(predictions=STORIES, rescale="human-roc", percentiles="human-roc")
    with pytest.raises(TypeError, match=r"score\(\) got both 'rescale' and 'percentiles'"):
        metric.scorer.score(STORIES, rescale="human-roc", percentiles="human-wp")
    arguments = ["score", "--metric", "union", "--input", "x.txt", "--output", str(tmp_path / "o.jsonl")]
    with pytest.raises(SystemExit) as exit_status:
        cli.main([*arguments, "--percentiles", "human-roc", "--rescale", "human-roc"])
    assert (
        exit_status.value.code == 2
        and "--rescale is the old name of --percentiles" in capsys.readouterr().err
    )
