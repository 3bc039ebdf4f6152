"""Generated negatives: the LM's sampling rules, the fold export and the replacement of corrupted copies."""

from __future__ import annotations

import hashlib
import json
import math
import pathlib
import re

import datasets
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from story_quality.training import generated_negatives as gn
from story_quality.training.negatives import generated, lm_continuations, story_lm
from story_quality.training.negatives.corpus_hash import corpus_sha256
from story_quality.union.normalization import SENTENCE_STOPS

WORDS = ["a", "b", "c", "d", "."]
VOCABULARY = {word: index for index, word in enumerate(story_lm.SPECIALS + WORDS)}
PERIOD = VOCABULARY["."]


def tiny_lm(seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(VOCABULARY), n_positions=story_lm.BLOCK, n_embd=32, n_layer=1, n_head=2
    )
    return GPT2LMHeadModel(config).eval()


def options(**changes) -> story_lm.SamplingOptions:
    return story_lm.SamplingOptions(top_k=len(VOCABULARY), sentence_end_ids=frozenset({PERIOD}), **changes)


def trigrams(ids: list[int]) -> list[tuple[int, int, int]]:
    return [tuple(ids[i : i + 3]) for i in range(len(ids) - 2)]


def test_blocked_rows_never_repeat_a_trigram_and_free_rows_do():
    torch.manual_seed(1)
    prefix = [story_lm.DOMAIN_TOKEN["wp"], VOCABULARY["a"], VOCABULARY["b"], VOCABULARY["c"]]
    blocked = [True] * 6 + [False] * 6
    new = story_lm.sample(tiny_lm(), [prefix] * 12, [40] * 12, ["wp"] * 12, blocked, options(margin=0))
    for row, continuation in enumerate(new):
        assert continuation, row
        grams = trigrams(prefix + continuation)
        if blocked[row]:
            assert len(grams) == len(set(grams)), f"blocked row {row} repeats a 3-gram"
    assert any(len(set(trigrams(prefix + c))) < len(trigrams(prefix + c)) for c in new[6:])


def test_batched_sampling_reads_what_a_full_reread_of_each_row_alone_reads():
    # top-1 draws: a row's continuation is fixed by the model; each step reading only the newest word
    # (cached keys and values, left padding, held positions) must pick what re-reading the whole row picks
    torch.manual_seed(3)
    config = GPT2Config(
        vocab_size=len(VOCABULARY),
        n_positions=story_lm.BLOCK,
        n_embd=32,
        n_layer=2,
        n_head=2,
        tie_word_embeddings=False,
    )
    model = GPT2LMHeadModel(config).eval()
    with torch.no_grad():  # large weights: a misplaced position or a padding word read changes the draw
        for name, weight in model.named_parameters():
            if name.endswith(("wte.weight", "wpe.weight", "c_attn.weight", "lm_head.weight")):
                weight.normal_(0, 1)
    wp = story_lm.DOMAIN_TOKEN["wp"]
    prefixes = [
        [wp, VOCABULARY["a"]],
        [wp, VOCABULARY["b"], VOCABULARY["c"], PERIOD, VOCABULARY["d"]],
        [wp] + [VOCABULARY["c"]] * 9,
    ]
    new = story_lm.sample(
        model,
        prefixes,
        [30] * 3,
        ["wp"] * 3,
        [False] * 3,
        story_lm.SamplingOptions(top_k=1, margin=0, sentence_end_ids=frozenset({PERIOD})),
    )
    for prefix, continuation in zip(prefixes, new, strict=True):
        history = list(prefix)
        for _ in range(30):
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([history])).logits[0, -1]
            logits[: len(story_lm.SPECIALS)] = -float("inf")
            history.append(int(logits.argmax()))
        assert continuation == history[len(prefix) :]


def test_samples_hold_no_specials_and_roc_rows_stop_after_four_sentences():
    torch.manual_seed(2)
    prefixes = [
        [story_lm.DOMAIN_TOKEN["roc"], VOCABULARY["a"], PERIOD],
        [story_lm.DOMAIN_TOKEN["roc"], VOCABULARY["b"]],
    ]
    new = story_lm.sample(tiny_lm(), prefixes, [60, 60], ["roc", "roc"], [False, True], options(margin=5))
    for continuation in new:
        assert all(word >= len(story_lm.SPECIALS) for word in continuation)
        assert len(continuation) <= 65
        ends = sum(word == PERIOD for word in continuation)
        assert ends <= story_lm.ROC_NEW_SENTENCES
        if len(continuation) < 65:
            assert ends == story_lm.ROC_NEW_SENTENCES and continuation[-1] == PERIOD


def test_continued_stories_keep_their_opening_and_come_in_a_blocked_and_a_free_copy():
    torch.manual_seed(3)
    targets = [
        {"story_index": 7, "domain": "roc", "fold": 0, "text": "a b . c d . a c . b d . d a ."},
        {"story_index": 9, "domain": "roc", "fold": 0, "text": "zz b . c d . a c . b d . d a ."},
    ]
    records = story_lm.continue_stories(tiny_lm(), targets, VOCABULARY, options(), batch_size=3)
    assert [(r["story_index"], r["copy"], r["blocked"]) for r in records] == [
        (7, 0, True),
        (7, 1, False),
        (9, 0, True),
        (9, 1, False),
    ]
    assert records[0]["text"].startswith("a b . ") and records[2]["text"].startswith("zz b . ")
    assert all(r["text"].split()[-1] in SENTENCE_STOPS for r in records)


class AscendingAfterFirstEpoch(torch.optim.AdamW):
    """AdamW for its first ``steps_per_epoch`` steps, then gradient ascent: held-out loss rises."""

    steps_per_epoch = 0

    def step(self, closure=None):
        self.steps = getattr(self, "steps", 0) + 1
        if self.steps <= self.steps_per_epoch:
            return super().step(closure)
        with torch.no_grad():
            for group in self.param_groups:
                for parameter in group["params"]:
                    if parameter.grad is not None:
                        parameter.add_(parameter.grad, alpha=0.5)
        return None


def test_the_lm_learns_a_pattern_and_keeps_its_best_epoch(monkeypatch):
    texts = [("roc", "a b c d .")] * 400
    lm_options = story_lm.LMOptions(width=32, layers=1, epochs=3, batch_size=8)
    _, record = story_lm.train_lm(texts, VOCABULARY, lm_options)
    losses = record["held_out_loss"]
    assert losses[-1] < losses[0]
    assert record["best_perplexity"] == pytest.approx(math.exp(min(losses)), abs=0.1)
    # Now a loss that rises after the first epoch: the model returned must be the first epoch's.
    stream = [
        tok
        for _, text in texts
        for tok in (story_lm.DOMAIN_TOKEN["roc"], *story_lm.encode(text, VOCABULARY), story_lm.EOS)
    ]
    blocks = len(stream) // story_lm.BLOCK
    held_out = torch.tensor(stream[: max(1, blocks // 50) * story_lm.BLOCK]).view(-1, story_lm.BLOCK)
    AscendingAfterFirstEpoch.steps_per_epoch = math.ceil((blocks - len(held_out)) / lm_options.batch_size)
    monkeypatch.setattr(torch.optim, "AdamW", AscendingAfterFirstEpoch)
    model, record = story_lm.train_lm(
        texts, VOCABULARY, story_lm.LMOptions(width=32, layers=1, epochs=3, batch_size=8, learning_rate=1e-2)
    )
    losses = record["held_out_loss"]
    assert min(losses) == losses[0] and losses[-1] > losses[0] + 0.05, losses
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        kept = model(input_ids=held_out, labels=held_out).loss.item()
    assert kept == pytest.approx(losses[0], abs=2e-3)
    with pytest.raises(ValueError, match="fewer than two windows"):
        story_lm.train_lm([("roc", "a b .")], VOCABULARY, story_lm.LMOptions(width=32, layers=1, epochs=1))


def pairs(stories: dict[int, str], negatives_each: int = 2) -> datasets.Dataset:
    rows = []
    for index, story in stories.items():
        for copy in range(negatives_each):
            rows.append(
                {
                    "text": story,
                    "label": 1,
                    "original": story,
                    "context": "",
                    "corruptions": [],
                    "story_index": index,
                }
            )
            rows.append(
                {
                    "text": f"corrupted {copy} of {index}",
                    "label": 0,
                    "original": story,
                    "context": "",
                    "corruptions": ["reordering"],
                    "story_index": index,
                }
            )
    return datasets.Dataset.from_list(rows)


def test_replacing_every_copy_takes_the_samples_in_order_and_leaves_human_rows():
    corpus = pairs({0: "a b c d e .", 1: "b c d e f ."})
    samples = {0: ["a b x y z .", "a b q r s ."]}
    swapped, summary = generated.replace_negatives(corpus, samples, fraction=1.0, seed=0)
    negatives = [r for r in swapped if r["label"] == 0]
    assert [r["text"] for r in negatives] == [
        "a b x y z .",
        "a b q r s .",
        "corrupted 0 of 1",
        "corrupted 1 of 1",
    ]
    assert [r["corruptions"] for r in negatives] == [[generated.GENERATED]] * 2 + [["reordering"]] * 2
    assert [r for r in swapped if r["label"] == 1] == [r for r in corpus if r["label"] == 1]
    assert summary["replaced"] == 2 and summary["negatives"] == 4
    assert summary["mean_4gram_copy_rate"] == 0.0


def test_replacing_nothing_changes_nothing_and_a_share_outside_0_1_is_refused():
    corpus = pairs({0: "a b c d e ."})
    unchanged, summary = generated.replace_negatives(corpus, {0: ["x y z ."]}, fraction=0.0, seed=0)
    assert unchanged.to_list() == corpus.to_list() and summary["replaced"] == 0
    with pytest.raises(ValueError, match="--fraction"):
        generated.replace_negatives(corpus, {}, fraction=1.5, seed=0)


def test_export_finds_each_storys_fold_and_refuses_a_story_the_lm_would_read(tmp_path):
    def human(texts: list[str], folder: str) -> None:
        datasets.Dataset.from_dict({"text": texts, "label": [1] * len(texts)}).save_to_disk(
            str(tmp_path / folder)
        )

    human(["r1 .", "r2 ."], "roc")
    human(["w1 .", "w1 later ."], "wp0")
    human(["w2 ."], "wp1")
    pairs({4: "w2 .", 5: "w1 .", 6: "own roc ."}).save_to_disk(str(tmp_path / "corpus"))
    folds = [tmp_path / "wp0", tmp_path / "wp1"]
    summary = lm_continuations.export(tmp_path / "corpus", tmp_path / "roc", folds, tmp_path / "work")
    targets = [json.loads(line) for line in (tmp_path / "work" / "targets.jsonl").read_text().splitlines()]
    assert [(t["story_index"], t["domain"], t["fold"]) for t in targets] == [
        (4, "wp", 1),
        (5, "wp", 0),
        (6, "roc", 0),
    ]
    assert summary["targets"] == {"wp": 2, "roc": 1}
    assert (tmp_path / "work" / "lm_wp_0.txt").read_text() == "w1 .\nw1 later .\n"
    pairs({1: "r2 ."}).save_to_disk(str(tmp_path / "leaky"))
    with pytest.raises(ValueError, match="also in --roc"):
        lm_continuations.export(tmp_path / "leaky", tmp_path / "roc", folds, tmp_path / "work2")


def test_the_three_commands_chain_on_a_tiny_corpus(tmp_path, capsys):
    """export -> generate (a one-layer LM on the CPU) -> replace, as the card's commands run them."""
    roc = [f"{w} {x} c d . a b {w} d ." for w in "ab" for x in "cd"] * 40
    datasets.Dataset.from_dict({"text": roc, "label": [1] * len(roc)}).save_to_disk(str(tmp_path / "roc"))
    for fold, texts in enumerate((["w a b . c d . a c ."] * 60, ["w b a . d c . c a ."] * 60)):
        datasets.Dataset.from_dict({"text": texts, "label": [1] * 60}).save_to_disk(
            str(tmp_path / f"wp{fold}")
        )
    pairs({0: "a b . c d . b a . d c . a a .", 1: "w a b . c d . a c ."}).save_to_disk(
        str(tmp_path / "corpus")
    )
    work = tmp_path / "work"
    gn.main(["export", str(tmp_path / "corpus"), "--roc", str(tmp_path / "roc"), "--out", str(work),
             "--wp-fold", str(tmp_path / "wp0"), "--wp-fold", str(tmp_path / "wp1")])  # fmt: skip
    samples = work / "generated.jsonl"
    gn.main(["generate", str(work), "--out", str(samples), "--width", "32", "--layers", "1",
             "--lm-epochs", "1", "--lm-batch", "4", "--gen-batch", "3", "--vocabulary", "50"])  # fmt: skip
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    assert sorted((r["story_index"], r["copy"], r["domain"]) for r in records) == [
        (0, 0, "roc"),
        (0, 1, "roc"),
        (1, 0, "wp"),
        (1, 1, "wp"),
    ]
    assert json.loads((work / "generated_record.json").read_text())["vocabulary"] > len(story_lm.SPECIALS)
    gn.main(["replace", str(tmp_path / "corpus"), str(samples), str(tmp_path / "out"), "--fraction", "1"])
    summary = json.loads((tmp_path / "out" / "generated_negatives_summary.json").read_text())
    swapped = datasets.load_from_disk(str(tmp_path / "out"))
    assert summary["replaced"] == summary["negatives"] == 4
    assert {tuple(r["corruptions"]) for r in swapped if r["label"] == 0} == {(generated.GENERATED,)}
    assert (
        summary["rows_sha256"]
        == corpus_sha256(swapped)
        != corpus_sha256(datasets.load_from_disk(str(tmp_path / "corpus")))
    )


def test_each_fold_is_continued_by_an_lm_that_never_read_it(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "lm_roc.txt").write_text("a b . c d .\n" * 3)
    (work / "lm_wp_0.txt").write_text("a a . b b .\n")
    (work / "lm_wp_1.txt").write_text("c c . d d .\n")
    targets = [{"story_index": 0, "domain": "wp", "fold": 0, "text": "a a . b b ."},
               {"story_index": 1, "domain": "wp", "fold": 1, "text": "c c . d d ."}]  # fmt: skip
    (work / "targets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in targets))
    read: list[set[str]] = []

    def fake_train(texts, vocabulary, options):
        read.append({text for domain, text in texts if domain == "wp"})
        torch.manual_seed(0)
        config = GPT2Config(
            vocab_size=len(vocabulary), n_positions=story_lm.BLOCK, n_embd=16, n_layer=1, n_head=1
        )
        return GPT2LMHeadModel(config).eval(), {}

    monkeypatch.setattr(lm_continuations, "train_lm", fake_train)
    lm_continuations.generate(
        work, tmp_path / "samples.jsonl", 100, story_lm.LMOptions(), options(), batch_size=4
    )
    assert read == [{"c c . d d ."}, {"a a . b b ."}]


# --- outputs never lost, inputs checked at the edge (issue cases 6, 7 and 15) -----------------


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
    assert json.loads((tmp_path / "out" / generated.SUMMARY).read_text())["seed"] == 3


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
