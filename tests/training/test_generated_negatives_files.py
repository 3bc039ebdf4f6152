"""generated_negatives.py's commands at the edge: outputs never lost, inputs checked (issue cases 6, 7
and 15), a sample never taken for another corpus."""

from __future__ import annotations

import hashlib
import json
import pathlib
import re

import datasets
import pytest
import torch
from built_corpus import pairs
from transformers import GPT2Config, GPT2LMHeadModel

from story_quality.training import generated_negatives as gn
from story_quality.training.negatives import copy_replacement, lm_continuations, story_lm


def fake_lm(texts, vocabulary, lm_options):
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(vocabulary), n_positions=story_lm.BLOCK, n_embd=16, n_layer=1, n_head=1
    )
    return GPT2LMHeadModel(config).eval(), {}


def work_folder(tmp_path) -> pathlib.Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "lm_roc.txt").write_text("a b . c d .\n" * 3)
    (work / "lm_wp_0.txt").write_text("a a . b b .\n")
    (work / "lm_wp_1.txt").write_text("c c . d d .\n")
    targets = [{"story_index": 0, "domain": "roc", "fold": 0, "text": "a b . c d . a c . b d ."}]
    (work / lm_continuations.TARGETS).write_text("".join(json.dumps(t) + "\n" for t in targets))
    return work


def generate(work: pathlib.Path, out: pathlib.Path, *extra: str) -> None:
    gn.main(["generate", str(work), "--out", str(out), "--vocabulary", "20", *extra])


def snapshot(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("out", ["targets.jsonl", "lm_roc.txt", "lm_wp_1.txt", ".", "targets"])
def test_generate_never_writes_over_its_inputs(tmp_path, monkeypatch, capsys, out):
    """Case 6: ``--out work/targets.jsonl`` overwrote the export's targets (and ``targets`` its record)."""
    work = work_folder(tmp_path)
    before = snapshot(work)
    if out == "targets":  # its record would be targets_record.json: harmless, but a folder named so is not
        (work / "targets_record.json").mkdir()
        before = snapshot(work)
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: pytest.fail("an LM was trained"))
    with pytest.raises(SystemExit) as error:
        generate(work, work / out)
    assert error.value.code == 2
    assert re.search(r"--out .*(is the input|holds the input|is a folder)", capsys.readouterr().err)
    assert snapshot(work) == before


def test_generate_replaces_only_its_own_samples_and_only_with_overwrite(tmp_path, monkeypatch, capsys):
    work = work_folder(tmp_path)
    monkeypatch.setattr(lm_continuations, "train_lm", fake_lm)
    users = tmp_path / "mine.jsonl"
    users.write_text('{"notes": 1}\n')
    with pytest.raises(SystemExit):
        generate(work, users)
    assert "was not written by generate" in capsys.readouterr().err and users.read_text() == '{"notes": 1}\n'
    samples = tmp_path / "samples.jsonl"
    generate(work, samples)
    record = json.loads((tmp_path / "samples_record.json").read_text())
    assert record["samples_sha256"] == hashlib.sha256(samples.read_bytes()).hexdigest()
    first = samples.read_bytes()
    with pytest.raises(SystemExit):
        generate(work, samples, "--seed", "8")
    assert "already holds samples; pass --overwrite" in capsys.readouterr().err
    assert samples.read_bytes() == first
    samples.write_text(samples.read_text() + "{}\n")  # edited by hand: no longer what generate wrote
    with pytest.raises(SystemExit):
        generate(work, samples, "--overwrite")
    assert "was not written by generate" in capsys.readouterr().err
    samples.write_bytes(first)
    generate(work, samples, "--overwrite", "--seed", "8")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mine.jsonl",
        "samples.jsonl",
        "samples_record.json",
        "work",
    ]


def two_fold_work(folder: pathlib.Path) -> pathlib.Path:
    work = work_folder(folder)
    target = {"story_index": 1, "domain": "roc", "fold": 1, "text": "c d . a b . d c . b a ."}
    with open(work / lm_continuations.TARGETS, "a") as handle:
        handle.write(json.dumps(target) + "\n")
    return work


def test_generate_cut_short_goes_on_from_its_last_finished_fold(tmp_path, monkeypatch, capsys):
    trained = []

    def lm_cut_at_fold_1(texts, vocabulary, lm_options):
        trained.append(len(trained))
        if len(trained) == 2:
            raise KeyboardInterrupt
        return fake_lm(texts, vocabulary, lm_options)

    (tmp_path / "clean").mkdir()
    monkeypatch.setattr(lm_continuations, "train_lm", fake_lm)
    generate(two_fold_work(tmp_path / "clean"), tmp_path / "clean" / "samples.jsonl")
    monkeypatch.setattr(lm_continuations, "train_lm", lm_cut_at_fold_1)
    work, samples = two_fold_work(tmp_path), tmp_path / "samples.jsonl"
    with pytest.raises(KeyboardInterrupt):
        generate(work, samples)
    assert not samples.exists() and (tmp_path / "samples_fold0.partial.json").is_file()
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: trained.append(len(trained)) or fake_lm(*a))
    generate(work, samples)
    assert trained == [0, 1, 2]  # fold 0 was not trained again
    assert "fold 0: its samples from an interrupted run" in capsys.readouterr().out
    assert samples.read_bytes() == (tmp_path / "clean" / "samples.jsonl").read_bytes()
    assert not list(tmp_path.glob("*.partial.json"))


def test_generate_makes_a_fold_again_under_other_settings_and_never_takes_a_foreign_file(
    tmp_path, monkeypatch, capsys
):
    work, samples = two_fold_work(tmp_path), tmp_path / "samples.jsonl"
    trained = []
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: trained.append(1) or fake_lm(*a))
    stale = {"settings": "another run", "trained": {}, "samples": [{"text": "stale"}]}
    (tmp_path / "samples_fold0.partial.json").write_text(json.dumps(stale))
    generate(work, samples)
    assert len(trained) == 2 and "stale" not in samples.read_text()
    (tmp_path / "other_fold1.partial.json").write_text('{"notes": 1}')
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: pytest.fail("an LM was trained"))
    with pytest.raises(SystemExit):
        generate(work, tmp_path / "other.jsonl")
    assert "other_fold1.partial.json beside it was not written by generate" in capsys.readouterr().err
    assert (tmp_path / "other_fold1.partial.json").read_text() == '{"notes": 1}'


def test_generate_refuses_targets_that_are_samples(tmp_path, monkeypatch, capsys):
    """Case 6: after ``--out work/targets.jsonl``, a rerun continued the continuations without a word."""
    work = work_folder(tmp_path)
    sample = {"story_index": 0, "copy": 0, "blocked": True, "domain": "roc", "fold": 0, "text": "a b . d ."}
    (work / lm_continuations.TARGETS).write_text(json.dumps(sample) + "\n")
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: pytest.fail("an LM was trained"))
    with pytest.raises(SystemExit):
        generate(work, tmp_path / "samples.jsonl")
    assert "targets.jsonl, line 1: a sample generate wrote, not a target" in capsys.readouterr().err


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("--temperature", "0", "must be a finite number above 0, got 0"),
        ("--temperature", "-1", "must be a finite number above 0, got -1"),
        ("--temperature", "nan", "must be a finite number above 0, got nan"),
        ("--top-k", "0", "must be at least 1, got 0"),
        ("--lm-lr", "0", "must be a finite number above 0, got 0"),
        ("--lm-epochs", "0", "must be at least 1, got 0"),
        ("--gen-batch", "0", "must be at least 1, got 0"),
        ("--margin", "-1", "must be at least 0, got -1"),
        ("--width", "129", "129 does not split evenly into its 2 attention heads"),
    ],
)
def test_generate_checks_its_numbers_before_any_training(
    tmp_path, monkeypatch, capsys, option, value, expected
):
    work = work_folder(tmp_path)
    monkeypatch.setattr(lm_continuations, "train_lm", lambda *a: pytest.fail("an LM was trained"))
    with pytest.raises(SystemExit) as error:
        generate(work, tmp_path / "samples.jsonl", option, value)
    assert error.value.code == 2 and f"{option}: {expected}" in capsys.readouterr().err


STORY = "a b . c d . a c . b d ."


def sample_line(
    index: int = 0, story: str | None = STORY, copy: int = 0, text: str = "a b . d d .", domain: str = "roc"
) -> str:
    """A line generate writes for ``story`` (``None``: one written before samples recorded their story's sha256)."""
    record = {
        "story_index": index,
        "copy": copy,
        "blocked": copy == 0,
        "domain": domain,
        "fold": 0,
        "text": text,
    }
    if story is not None:
        record["story_sha256"] = story_lm.text_sha256(story)
    return json.dumps(record) + "\n"


def replace(tmp_path, samples: pathlib.Path, out: pathlib.Path, *extra: str) -> None:
    gn.main(["replace", str(tmp_path / "corpus"), str(samples), str(out), "--fraction", "1", *extra])


@pytest.fixture
def corpus(tmp_path) -> pathlib.Path:
    pairs({0: STORY, 1: "b a . d c . c a . d b ."}).save_to_disk(str(tmp_path / "corpus"))
    return tmp_path / "corpus"


@pytest.mark.parametrize(
    "line, expected",
    [
        (sample_line(story="a b . other story ."), "continues another story than the corpus's story 0"),
        (
            sample_line(text="x y . d d .", story=None),
            "continues another story",
        ),  # no sha: the opening
        (sample_line(index=7), "story_index 7 is not in the corpus"),
    ],
)
def test_replace_refuses_samples_made_for_another_corpus(tmp_path, corpus, capsys, line, expected):
    """Case 15: samples were matched by story_index alone."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text(sample_line(copy=1) + line.replace('"story_sha256": null, ', ""))
    if "null" in line:
        samples.write_text(
            sample_line(copy=1) + json.dumps({k: v for k, v in json.loads(line).items() if v}) + "\n"
        )
    with pytest.raises(SystemExit):
        replace(tmp_path, samples, tmp_path / "out")
    assert "samples.jsonl, line 2: " in (err := capsys.readouterr().err) and expected in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "content, expected",
    [
        ("Ken went home.\nHe slept.\n", r"stories.txt, line 1: not a JSON object; expected the samples"),
        (
            json.dumps({"story_index": 0, "domain": "roc", "fold": 0, "text": STORY}) + "\n",
            r"line 1: no copy; expected the samples",
        ),
    ],
)
def test_replace_names_a_file_that_holds_no_samples(tmp_path, corpus, capsys, content, expected):
    """``replace mix stories.txt`` gave a bare JSONDecodeError, ``replace mix targets.jsonl`` KeyError: 'copy'."""
    samples = tmp_path / "stories.txt"
    samples.write_text(content)
    with pytest.raises(SystemExit):
        replace(tmp_path, samples, tmp_path / "out")
    assert re.search(expected, capsys.readouterr().err)


@pytest.mark.parametrize("folder", ["user state.json", "another corpus", "the corpus", "a file"])
def test_replace_never_writes_into_a_folder_it_did_not_write(tmp_path, corpus, capsys, folder):
    """Case 7: a user's state.json was overwritten; another built corpus kept its old build summary."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text(sample_line())
    out = {"the corpus": corpus, "a file": tmp_path / "out.txt"}.get(folder, tmp_path / "out")
    if folder == "user state.json":
        out.mkdir()
        (out / "state.json").write_text("mine")
    elif folder == "another corpus":
        pairs({5: STORY}).save_to_disk(str(out))
        (out / "union_build_summary.json").write_text("{}")
    elif folder == "a file":
        out.write_text("mine")
    before = snapshot(out) if out.is_dir() else out.read_bytes()
    with pytest.raises(SystemExit):
        replace(tmp_path, samples, out, "--overwrite")
    assert re.search(
        r"did not write|was not written by replace|is the input|is a file", capsys.readouterr().err
    )
    assert (snapshot(out) if out.is_dir() else out.read_bytes()) == before


def test_replace_replaces_its_own_output_only_with_overwrite(tmp_path, corpus, capsys):
    samples = tmp_path / "samples.jsonl"
    samples.write_text(sample_line())
    replace(tmp_path, samples, tmp_path / "out")
    before = snapshot(tmp_path / "out")
    with pytest.raises(SystemExit):
        replace(tmp_path, samples, tmp_path / "out", "--seed", "3")
    assert "already holds a corpus with generated negatives; pass --overwrite" in capsys.readouterr().err
    assert snapshot(tmp_path / "out") == before
    replace(tmp_path, samples, tmp_path / "out", "--overwrite", "--seed", "3")
    assert json.loads((tmp_path / "out" / copy_replacement.SUMMARY).read_text())["seed"] == 3


def test_export_refuses_a_writingprompts_text_in_no_fold(tmp_path):
    """Case 15: a WP story whose fold was not given was continued as a ROC story (one sentence, four more)."""
    datasets.Dataset.from_dict({"text": ["r ."], "label": [1]}).save_to_disk(str(tmp_path / "roc"))
    for fold in (0, 1):
        datasets.Dataset.from_dict({"text": [f"w{fold} ."], "label": [1]}).save_to_disk(
            str(tmp_path / f"wp{fold}")
        )
    long_wp = " ".join(f"s{i} a b c ." for i in range(lm_continuations.ROC_MAX_SENTENCES + 1))
    pairs({3: STORY, 4: long_wp}).save_to_disk(str(tmp_path / "corpus"))
    folds = [tmp_path / "wp0", tmp_path / "wp1"]
    with pytest.raises(ValueError, match=r"story 4 of .*corpus is in no --wp-fold, but with 8 sentences"):
        lm_continuations.export(tmp_path / "corpus", tmp_path / "roc", folds, tmp_path / "work")
    assert not (tmp_path / "work").exists()
    pairs({3: STORY}).save_to_disk(str(tmp_path / "roc_only"))
    lm_continuations.export(tmp_path / "roc_only", tmp_path / "roc", folds, tmp_path / "work")
    (target,) = [
        json.loads(line) for line in (tmp_path / "work" / lm_continuations.TARGETS).read_text().splitlines()
    ]
    assert target["domain"] == "roc" and target["story_sha256"] == hashlib.sha256(STORY.encode()).hexdigest()


def test_export_counts_no_sentence_at_an_abbreviations_full_stop(tmp_path):
    """UNION's reference 3256: five sentences, eight full stops, three of them after "mr"."""
    datasets.Dataset.from_dict({"text": ["r ."], "label": [1]}).save_to_disk(str(tmp_path / "roc"))
    for fold in (0, 1):
        datasets.Dataset.from_dict({"text": [f"w{fold} ."], "label": [1]}).save_to_disk(
            str(tmp_path / f"wp{fold}")
        )
    story = "mr . [MALE] taught . kids loved mr . [MALE] . it was fun . police came . they took mr . [MALE] ."
    pairs({3: story}).save_to_disk(str(tmp_path / "corpus"))
    folds = [tmp_path / "wp0", tmp_path / "wp1"]
    summary = lm_continuations.export(tmp_path / "corpus", tmp_path / "roc", folds, tmp_path / "work")
    assert summary["targets"] == {"roc": 1}
    eight = story.replace("mr .", "sir .")
    pairs({3: eight}).save_to_disk(str(tmp_path / "eight"))
    with pytest.raises(ValueError, match="with 8 sentences"):
        lm_continuations.export(tmp_path / "eight", tmp_path / "roc", folds, tmp_path / "work2")


def test_export_writes_only_a_new_folder_or_its_own(tmp_path, capsys):
    datasets.Dataset.from_dict({"text": ["r ."], "label": [1]}).save_to_disk(str(tmp_path / "roc"))
    for fold in (0, 1):
        datasets.Dataset.from_dict({"text": [f"w{fold} ."], "label": [1]}).save_to_disk(
            str(tmp_path / f"wp{fold}")
        )
    pairs({3: STORY}).save_to_disk(str(tmp_path / "corpus"))
    arguments = ["export", str(tmp_path / "corpus"), "--roc", str(tmp_path / "roc"),
                 "--wp-fold", str(tmp_path / "wp0"), "--wp-fold", str(tmp_path / "wp1")]  # fmt: skip
    gn.main([*arguments, "--out", str(tmp_path / "work")])
    (tmp_path / "work" / "generated.jsonl").write_text("hours of samples\n")
    with pytest.raises(SystemExit):
        gn.main([*arguments, "--out", str(tmp_path / "work"), "--overwrite"])
    assert "holds files export did not write (generated.jsonl)" in capsys.readouterr().err
    assert (tmp_path / "work" / "generated.jsonl").read_text() == "hours of samples\n"
    with pytest.raises(SystemExit):
        gn.main([*arguments, "--out", str(tmp_path / "corpus"), "--overwrite"])
    assert "is the input" in capsys.readouterr().err
