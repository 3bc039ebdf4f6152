"""Generated negatives: the LM's sampling rules, the fold export and the replacement of corrupted copies."""

from __future__ import annotations

import json
import math

import datasets
import pytest
import torch
from built_corpus import pairs
from transformers import GPT2Config, GPT2LMHeadModel

from story_quality.training import generated_negatives as gn
from story_quality.training.negatives import copy_replacement, lm_continuations, story_lm
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


def test_replacing_every_copy_takes_the_samples_in_order_and_leaves_human_rows():
    corpus = pairs({0: "a b c d e .", 1: "b c d e f ."})
    samples = {0: ["a b x y z .", "a b q r s ."]}
    swapped, summary = copy_replacement.replace_negatives(corpus, samples, fraction=1.0, seed=0)
    negatives = [r for r in swapped if r["label"] == 0]
    assert [r["text"] for r in negatives] == [
        "a b x y z .",
        "a b q r s .",
        "corrupted 0 of 1",
        "corrupted 1 of 1",
    ]
    assert [r["corruptions"] for r in negatives] == [[copy_replacement.GENERATED]] * 2 + [["reordering"]] * 2
    assert [r for r in swapped if r["label"] == 1] == [r for r in corpus if r["label"] == 1]
    assert summary["replaced"] == 2 and summary["negatives"] == 4
    assert summary["mean_4gram_copy_rate"] == 0.0


def test_replacing_nothing_changes_nothing_and_a_share_outside_0_1_is_refused():
    corpus = pairs({0: "a b c d e ."})
    unchanged, summary = copy_replacement.replace_negatives(corpus, {0: ["x y z ."]}, fraction=0.0, seed=0)
    assert unchanged.to_list() == corpus.to_list() and summary["replaced"] == 0
    with pytest.raises(ValueError, match="--fraction"):
        copy_replacement.replace_negatives(corpus, {}, fraction=1.5, seed=0)


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
    assert {tuple(r["corruptions"]) for r in swapped if r["label"] == 0} == {(copy_replacement.GENERATED,)}
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
