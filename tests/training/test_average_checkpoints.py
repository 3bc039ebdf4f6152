"""Weight averaging of checkpoints: exact means, a loadable result, and mismatches named."""

from __future__ import annotations

import json
import pathlib
import shutil
import warnings

import evaluate
import pytest
import torch
from safetensors.torch import load_file, save_file
from tiny_models import save_union_checkpoint

from story_quality.training.average_checkpoints import (
    MEMBERS_FILE,
    MIN_ALIGNMENT,
    CheckpointMismatch,
    average_checkpoints,
    average_state_dicts,
    least_aligned,
    main,
)
from story_quality.union.normalization import ROC_STORIES

REPO = pathlib.Path(__file__).resolve().parents[2]
STORIES = [
    "Ken went to the store. He bought milk. He went home happy.",
    "the dog ran to the school . the cat ate .",
    "I played with my friends after school. We ran and ran. Then we ate.",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[pathlib.Path]:
    root = tmp_path_factory.mktemp("runs")
    return [
        save_union_checkpoint(root / f"run{seed}", normalization=ROC_STORIES.to_dict(), seed=seed)
        for seed in (0, 1, 2)
    ]


def test_every_weight_is_the_mean_of_the_members(runs, tmp_path):
    with pytest.warns(UserWarning, match=r"run1's .* points away from .*run0's .*one train_union.py --seed"):
        soup = average_checkpoints(runs, tmp_path / "soup")
    members = [load_file(str(run / "model.safetensors")) for run in runs]
    averaged = load_file(str(soup / "model.safetensors"))
    assert averaged.keys() == members[0].keys()
    assert not torch.equal(members[0]["classifier.weight"], members[1]["classifier.weight"])
    for key, tensor in averaged.items():
        expected = (members[0][key].double() + members[1][key].double() + members[2][key].double()) / 3
        torch.testing.assert_close(tensor, expected.to(tensor.dtype), rtol=0, atol=1e-7, msg=key)
    assert json.loads((soup / MEMBERS_FILE).read_text()) == {"averaged": [str(r) for r in runs]}


@pytest.mark.filterwarnings("ignore:.*points away from")
def test_the_order_of_the_members_does_not_matter(runs, tmp_path):
    forward = load_file(str(average_checkpoints(runs, tmp_path / "ab") / "model.safetensors"))
    backward = load_file(str(average_checkpoints(runs[::-1], tmp_path / "ba") / "model.safetensors"))
    for key in forward:
        torch.testing.assert_close(forward[key], backward[key], rtol=0, atol=1e-7)


def shifted_copy(run, folder, shift: float):
    """A copy of ``run`` with every float weight moved by ``shift`` (another model: one copied as it is
    is refused as the same one twice)."""
    shutil.copytree(run, folder)
    weights = load_file(folder / "model.safetensors")
    shifted = {k: v + shift if v.is_floating_point() else v for k, v in weights.items()}
    save_file(shifted, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_the_union_metric_scores_a_soup_of_twins_around_a_run_as_the_run(runs, tmp_path):
    above = shifted_copy(runs[0], tmp_path / "above", 1e-3)
    below = shifted_copy(runs[0], tmp_path / "below", -1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # aligned members: no warning
        soup = average_checkpoints([above, below], tmp_path / "soup")  # their mean is the run
    evaluate.logging.disable_progress_bar()
    try:
        alone = evaluate.load(str(REPO / "metrics" / "union"), str(runs[0])).compute(predictions=STORIES)
        averaged = evaluate.load(str(REPO / "metrics" / "union"), str(soup)).compute(predictions=STORIES)
    finally:
        evaluate.logging.enable_progress_bar()
    assert averaged["scores"] == pytest.approx(alone["scores"], abs=1e-6)
    assert len(set(alone["scores"])) == len(STORIES)  # distinct scores: an order mix-up would show


def test_a_configuration_difference_is_named(runs, tmp_path):
    other = save_union_checkpoint(tmp_path / "lowercase-only", normalization={"lowercase": True}, seed=3)
    with pytest.raises(
        CheckpointMismatch, match=r"lowercase-only's configuration differs.*union_normalization"
    ):
        average_checkpoints([runs[0], other], tmp_path / "soup")
    assert not (tmp_path / "soup").exists()


def test_a_vocabulary_difference_is_named(runs, tmp_path):
    other = tmp_path / "other-vocab"
    shutil.copytree(runs[1], other)
    tokenizer_file = other / "tokenizer.json"
    spec = json.loads(tokenizer_file.read_text())
    vocab = spec["model"]["vocab"]
    first, second = "dog", "cat"  # same size, same shapes: only the mapping differs
    vocab[first], vocab[second] = vocab[second], vocab[first]
    tokenizer_file.write_text(json.dumps(spec))
    with pytest.raises(CheckpointMismatch, match=r"other-vocab's vocabulary differs"):
        average_checkpoints([runs[0], other], tmp_path / "soup")


def test_a_tokenizer_difference_with_one_vocabulary_is_named(runs, tmp_path):
    other = tmp_path / "cased"
    shutil.copytree(runs[1], other)
    for name, edit in [
        ("tokenizer.json", lambda spec: spec["normalizer"].update(lowercase=False)),
        ("tokenizer_config.json", lambda spec: spec.update(do_lower_case=False)),
    ]:
        spec = json.loads((other / name).read_text())
        edit(spec)
        (other / name).write_text(json.dumps(spec))
    with pytest.raises(CheckpointMismatch, match=rf"cased's tokenizer differs from {runs[0]}'s: .*lower"):
        average_checkpoints([runs[0], other], tmp_path / "soup")
    assert not (tmp_path / "soup").exists()


def test_state_dict_mismatches_name_the_tensor():
    a = {"w": torch.zeros(2, 3), "ids": torch.arange(3)}
    with pytest.raises(CheckpointMismatch, match=r"b: tensor w is \(3, 2\)"):
        average_state_dicts([a, {"w": torch.zeros(3, 2), "ids": torch.arange(3)}], ["a", "b"])
    with pytest.raises(CheckpointMismatch, match=r"b: non-float tensor ids differs"):
        average_state_dicts([a, {"w": torch.ones(2, 3), "ids": torch.arange(3) + 1}], ["a", "b"])
    with pytest.raises(
        CheckpointMismatch, match=r"b has other tensors than a: extra \['v'\], missing \['ids'\]"
    ):
        average_state_dicts([a, {"w": torch.ones(2, 3), "v": torch.ones(1)}], ["a", "b"])
    mean = average_state_dicts([a, {"w": torch.ones(2, 3), "ids": torch.arange(3)}], ["a", "b"])
    assert torch.equal(mean["w"], torch.full((2, 3), 0.5)) and torch.equal(mean["ids"], torch.arange(3))


def test_too_few_or_repeated_checkpoints_are_usage_errors(runs, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(runs[0]), "--output-dir", str(tmp_path / "soup")])
    assert exit_info.value.code == 2
    assert "at least two checkpoints" in capsys.readouterr().err
    for again in (str(runs[0]), f"{runs[0]}/", str(runs[0].parent / "." / runs[0].name)):
        with pytest.raises(SystemExit):
            main([str(runs[0]), again, "--output-dir", str(tmp_path / "soup")])
        assert f"{again!r} is {str(runs[0])!r} again (the same folder)" in capsys.readouterr().err
    copy = shutil.copytree(runs[0], tmp_path / "run-a-copy")  # one model under another folder name
    with pytest.raises(SystemExit) as exit_info:
        main([str(runs[0]), str(runs[1]), str(copy), "--output-dir", str(tmp_path / "soup")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{str(copy)!r} is {str(runs[0])!r} again (the same weights (sha256 " in err
    assert not (tmp_path / "soup").exists()


def test_the_least_aligned_weight_matrix_is_found():
    torch.manual_seed(0)
    shared = {"encoder": torch.randn(8, 8), "head": torch.randn(2, 8), "bias": torch.randn(8)}
    fine_tuned = {k: v + 0.05 * torch.randn_like(v) for k, v in shared.items()}
    redrawn_head = {**fine_tuned, "head": torch.randn(2, 8)}
    cosine, tensor, member = least_aligned([shared, fine_tuned, redrawn_head], ["a", "b", "c"])
    assert (tensor, member) == ("head", "c") and cosine < MIN_ALIGNMENT
    expected = torch.nn.functional.cosine_similarity(
        shared["head"].flatten(), redrawn_head["head"].flatten(), dim=0
    )
    assert cosine == pytest.approx(expected.item(), abs=1e-6)
    assert least_aligned([shared, fine_tuned], ["a", "b"])[0] > 0.99
    redrawn_bias = {**fine_tuned, "bias": torch.randn(8)}  # vectors are not compared: biases start at 0
    assert least_aligned([shared, redrawn_bias], ["a", "b"])[1] != "bias"


def folder_contents(folder: pathlib.Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def copies(runs, tmp_path) -> list[pathlib.Path]:
    """Two members in this test's own folder (a refused output must leave them as they were)."""
    return [pathlib.Path(shutil.copytree(run, tmp_path / run.name)) for run in runs[:2]]


@pytest.mark.parametrize("output", ["the first member", "a folder holding a member"])
def test_the_output_is_never_a_member(copies, output):
    """Case 5: ``run1 run2 --output-dir run1`` once overwrote run1's weights under its old card."""
    target = copies[0] if output == "the first member" else copies[0].parent
    before = folder_contents(copies[0])
    with pytest.raises(ValueError, match=r"--output-dir .* (is|holds) the input"):
        average_checkpoints(copies, target, overwrite=True)
    assert folder_contents(copies[0]) == before


@pytest.mark.parametrize("folder", ["another model", "user notes", "a file"])
def test_a_folder_the_tool_did_not_write_is_refused_before_any_work(
    copies, runs, tmp_path, folder, monkeypatch
):
    if folder == "another model":
        target = pathlib.Path(shutil.copytree(runs[2], tmp_path / "other-model"))
        expected = r"(holds files average_checkpoints did not write|was not written by average_checkpoints)"
    elif folder == "user notes":
        target = tmp_path / "notes"
        target.mkdir()
        (target / "ideas.md").write_text("mine")
        expected = r"holds files average_checkpoints did not write \(ideas.md\)"
    else:
        target = tmp_path / "soup.txt"
        target.write_text("mine")
        expected = r"is a file, not a folder"
    before = folder_contents(target) if target.is_dir() else target.read_bytes()
    monkeypatch.setattr(
        "story_quality.training.average_checkpoints.load_member", lambda name: pytest.fail("work was done")
    )
    with pytest.raises(ValueError, match=expected):
        average_checkpoints(copies, target, overwrite=True)
    assert (folder_contents(target) if target.is_dir() else target.read_bytes()) == before


@pytest.mark.filterwarnings("ignore:.*points away from")
def test_an_earlier_average_is_replaced_only_with_overwrite(copies, runs, tmp_path):
    soup = average_checkpoints(copies, tmp_path / "soup")
    before = folder_contents(soup)
    with pytest.raises(ValueError, match=r"already holds an averaged checkpoint; pass --overwrite"):
        average_checkpoints([copies[0], runs[2]], soup)
    assert folder_contents(soup) == before
    average_checkpoints([copies[0], runs[2]], soup, overwrite=True)
    assert json.loads((soup / MEMBERS_FILE).read_text()) == {"averaged": [str(copies[0]), str(runs[2])]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run0", "run1", "soup"]  # no scratch left


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_member_with_non_finite_weights_is_refused_naming_it_and_the_tensor(copies, tmp_path, value):
    """Case 14: a NaN weight would make every score of the average NaN."""
    weights = load_file(str(copies[1] / "model.safetensors"))
    key = sorted(weights)[3]
    weights[key].view(-1)[0] = value
    save_file(weights, str(copies[1] / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=rf"{copies[1]}: tensor {key} holds NaN or infinite weights"):
        average_checkpoints(copies, tmp_path / "soup")
    assert not (tmp_path / "soup").exists()


def test_a_missing_member_is_a_usage_error_naming_it(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as error:
        main([str(runs[0]), "nothere", "--output-dir", "soup"])
    assert error.value.code == 2
    assert "nothere: no such checkpoint folder" in capsys.readouterr().err
    assert not (tmp_path / "soup").exists()
