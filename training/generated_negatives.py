"""Negatives that read like generated stories: continuations sampled from a small story LM.

UNION's corruptions edit a human story in place; the generated stories that people rate lowest
are fluent text that loses the thread, which those corruptions never look like. So a share of
a built corpus's corrupted copies is replaced by continuations of the same story's opening,
sampled from a story LM. No English LM is reachable offline, so the LM is trained here from
scratch on the project's own human stories: a word-level GPT-2 over the normalised Penn Treebank
tokens, so that a sample is tokenised exactly like the human text it stands beside. Three steps:

    # 1. the LM's texts and the stories to continue, from corpora written by build_union_data.py
    python training/generated_negatives.py export union-mix-data \\
        --roc lm-roc --wp-fold lm-wp-even --wp-fold lm-wp-odd --out lm-work
    # 2. train the LM and sample two continuations a story (slow without a GPU; see benchmarks/RESULTS.md)
    python training/generated_negatives.py generate lm-work --out lm-work/generated.jsonl
    # 3. replace a share of the corpus's corrupted copies by the samples
    python training/generated_negatives.py replace union-mix-data lm-work/generated.jsonl \\
        union-mix-gen --fraction 0.25

Folds keep the LM from continuing a story it was trained on: the WritingPrompts stories come in
two halves (``--wp-fold`` twice), and each half is continued by an LM trained on the other half
and on the ROC stories of ``--roc`` (which must hold none of the corpus's ROC stories); the
corpus's ROC stories are shared between the two LMs by ``story_index`` parity. A ROC story is
continued from its first sentence to four more; a WritingPrompts text from its first two
sentences (the prompt and the story's first) to about its own length, cut at a sentence end. Of
the two samples per story (top-k 40), the first is decoded with 3-gram blocking (no 3-gram
twice, a common setting of story generators) and the second without.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import pathlib
import random
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from story_quality.training.cli_types import at_least, positive_number
from story_quality.training.output_folders import (
    OutputKind,
    check_output_folder,
    probe_writable,
    refuse_input_as_output,
    written_whole,
    written_whole_file,
)
from story_quality.union.story_text import SENTENCE_STOPS

SPECIALS = ["<pad>", "<unk>", "<eos>", "<roc>", "<wp>"]
PAD, UNK, EOS = 0, 1, 2
DOMAIN_TOKEN = {"roc": 3, "wp": 4}
BLOCK = 256  # the LM's window in words; every sample stays inside it
ROC_NEW_SENTENCES = 4  # a ROC story is five sentences; the first is given
GENERATED = "generated"  # the corruption name replaced rows carry
# A ROC story has five sentences of about 45 words (at most 71 in ROCStories); a text in no
# --wp-fold that is longer is a WritingPrompts text whose fold was left out, never a ROC story.
ROC_MAX_SENTENCES = 7
ROC_MAX_WORDS = 120
TARGETS = "targets.jsonl"
SUMMARY = "generated_negatives_summary.json"
TARGET_KEYS = ("story_index", "domain", "fold", "text")
SAMPLE_KEYS = ("story_index", "copy", "domain", "text")
# export's work folder; replace's output (a saved dataset and its summary, never another corpus's).
WORK = OutputKind(
    "export", "an export's work folder", TARGETS, frozenset({"lm_roc.txt"}), re.compile(r"lm_wp_\d+\.txt")
)
REPLACED = OutputKind(
    "replace",
    "a corpus with generated negatives",
    SUMMARY,
    frozenset({"dataset_info.json", "state.json"}),
    re.compile(r"data-\d{5}-of-\d{5}\.arrow|cache-[\w.-]+\.arrow|tmp\w+"),
)


@dataclass
class LMOptions:
    width: int = 512
    layers: int = 6
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 6e-4
    seed: int = 7
    device: str = "cpu"


@dataclass
class SamplingOptions:
    top_k: int = 40
    temperature: float = 1.0
    margin: int = 20  # words a WritingPrompts sample may run past its story's length
    sentence_end_ids: frozenset[int] = field(default_factory=frozenset)
    device: str = "cpu"


def first_sentences(words: Sequence[str], n: int) -> int:
    """How many words the first ``n`` sentences of a tokenised text take (all of it if fewer).

    >>> first_sentences("a b . c d ! e".split(), 2)
    6
    """
    seen = 0
    for position, word in enumerate(words):
        if word in SENTENCE_STOPS:
            seen += 1
            if seen == n:
                return position + 1
    return len(words)


def cut_at_sentence_end(words: list[str], keep_at_least: int) -> list[str]:
    """``words`` up to their last sentence end, if that keeps ``keep_at_least`` words.

    >>> cut_at_sentence_end("a . b c".split(), 1)
    ['a', '.']
    >>> cut_at_sentence_end("a . b c".split(), 3)
    ['a', '.', 'b', 'c']
    """
    for end in range(len(words), keep_at_least - 1, -1):
        if end and words[end - 1] in SENTENCE_STOPS:
            return words[:end]
    return words


def copy_rate(sample_text: str, original: str, n: int = 4) -> float:
    """Share of the sample's n-grams that occur in the original story (the given opening included).

    >>> copy_rate("a b c d e", "a b c d x")
    0.5
    """
    mine = sample_text.split()
    grams = [tuple(mine[i : i + n]) for i in range(len(mine) - n + 1)]
    words = original.split()
    theirs = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
    return sum(g in theirs for g in grams) / len(grams) if grams else 0.0


def text_sha256(text: str) -> str:
    """The sha256 of a story's text: what ties a sample to the story it continues."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def opening(tokens: Sequence[str], domain: str) -> list[str]:
    """The words a sample is given: a ROC story's first sentence, a WritingPrompts text's first two
    (the prompt and the story's first), never more than half the text.

    >>> opening("a b . c d . e f .".split(), "roc")
    ['a', 'b', '.']
    """
    return list(tokens[: min(first_sentences(tokens, 1 if domain == "roc" else 2), len(tokens) // 2)])


# --- 1. export ----------------------------------------------------------------------------


def _human_texts(folder: pathlib.Path, option: str) -> list[str]:
    corpus = load_corpus(folder, option)
    return [text for text, label in zip(corpus["text"], corpus["label"], strict=True) if label == 1]


def load_corpus(folder: pathlib.Path, option: str) -> Any:
    """A corpus saved by ``datasets.save_to_disk``; a missing or other folder is named."""
    import datasets

    if not (folder / "dataset_info.json").is_file() and not (folder / "state.json").is_file():
        raise FileNotFoundError(
            f"{option} {folder}: not a corpus saved by build_union_data.py (no dataset_info.json)."
        )
    return datasets.load_from_disk(str(folder))


def export(
    corpus_dir: pathlib.Path,
    roc_dir: pathlib.Path,
    wp_fold_dirs: Sequence[pathlib.Path],
    out: pathlib.Path,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write ``lm_roc.txt``, ``lm_wp_<fold>.txt`` and ``targets.jsonl`` (one line per story of the
    corpus: ``story_index``, ``domain``, ``fold``, ``text``, ``story_sha256``) into ``out``, a new
    folder or (with ``overwrite``) an earlier export's, replaced whole.

    A story in no ``--wp-fold`` is taken for a ROC story only if it is shaped like one (at most
    ``ROC_MAX_SENTENCES`` sentences and ``ROC_MAX_WORDS`` words); a longer one is a WritingPrompts
    text whose fold was not given, and is refused, naming it.
    """
    if len(wp_fold_dirs) < 2:
        raise ValueError(
            "--wp-fold: give two folds (or more), each continued by an LM trained on the others."
        )
    check_output_folder(out, WORK, overwrite, inputs=[corpus_dir, roc_dir, *wp_fold_dirs], option="--out")
    probe_writable(out, "--out")
    roc = _human_texts(roc_dir, "--roc")
    folds = [_human_texts(folder, "--wp-fold") for folder in wp_fold_dirs]
    targets, counts = export_targets(load_corpus(corpus_dir, "corpus"), corpus_dir, (roc_dir, roc), folds)
    with written_whole(out) as scratch:
        (scratch / "lm_roc.txt").write_text("".join(text + "\n" for text in roc), encoding="utf-8")
        for number, texts in enumerate(folds):
            (scratch / f"lm_wp_{number}.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        (scratch / TARGETS).write_text("".join(json.dumps(t) + "\n" for t in targets), encoding="utf-8")
    return {"lm_texts": {"roc": len(roc), "wp_folds": [len(f) for f in folds]}, "targets": dict(counts)}


def export_targets(
    corpus: Any,
    corpus_dir: pathlib.Path,
    roc: tuple[pathlib.Path, Sequence[str]],
    folds: Sequence[Sequence[str]],
) -> tuple[list[dict[str, Any]], collections.Counter[str]]:
    """One target per story of ``corpus`` (its human rows) with its domain and fold, and the count per domain."""
    roc_dir, roc_known = roc[0], set(roc[1])
    fold_of = {text: number for number, texts in enumerate(folds) for text in texts}
    counts: collections.Counter[str] = collections.Counter()
    targets, seen = [], set()
    for row in corpus:
        index, text = row["story_index"], row["text"]
        if row["label"] != 1 or index in seen:
            continue
        seen.add(index)
        if text in roc_known:
            raise ValueError(
                f"story {index} of {corpus_dir} is also in --roc {roc_dir}: the LM would have read it."
            )
        if text in fold_of:
            domain, fold = "wp", fold_of[text]
        else:
            refuse_unlike_roc(text.split(), index, corpus_dir)
            domain, fold = "roc", index % len(folds)
        counts[domain] += 1
        targets.append(
            {
                "story_index": index,
                "domain": domain,
                "fold": fold,
                "text": text,
                "story_sha256": text_sha256(text),
            }
        )
    return targets, counts


def refuse_unlike_roc(words: Sequence[str], index: int, corpus_dir: pathlib.Path) -> None:
    """Fail when a story in no --wp-fold is longer than a ROC story: its WritingPrompts fold is missing."""
    sentences = sum(word in SENTENCE_STOPS for word in words)
    if sentences > ROC_MAX_SENTENCES or len(words) > ROC_MAX_WORDS:
        raise ValueError(
            f"story {index} of {corpus_dir} is in no --wp-fold, but with {sentences} sentences and {len(words)} "
            f"words it is no ROC story (at most {ROC_MAX_SENTENCES} and {ROC_MAX_WORDS}): give every "
            "WritingPrompts fold of the corpus with --wp-fold."
        )


# --- 2. generate --------------------------------------------------------------------------


def build_vocabulary(texts: Iterable[str], size: int, min_count: int = 2) -> dict[str, int]:
    """The specials, then the ``size`` most frequent words seen ``min_count`` times.

    >>> build_vocabulary(["a b a", "a c"], size=10)
    {'<pad>': 0, '<unk>': 1, '<eos>': 2, '<roc>': 3, '<wp>': 4, 'a': 5}
    """
    counts = collections.Counter(word for text in texts for word in text.split())
    words = [word for word, count in counts.most_common(size) if count >= min_count]
    return {word: index for index, word in enumerate(SPECIALS + words)}


def encode(text: str, vocabulary: dict[str, int]) -> list[int]:
    """The word ids of ``text``; a word outside ``vocabulary`` is ``UNK``.

    >>> encode("a z", {"a": 5})
    [5, 1]
    """
    return [vocabulary.get(word, UNK) for word in text.split()]


def train_lm(
    texts: Sequence[tuple[str, str]], vocabulary: dict[str, int], options: LMOptions
) -> tuple[Any, dict[str, Any]]:
    """A GPT-2 trained from scratch on ``(domain, text)`` pairs packed into windows of ``BLOCK``
    words; returns the model of the best epoch on 2 % of the windows held out, and its record."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    stream: list[int] = []
    shuffled = list(texts)
    random.Random(options.seed).shuffle(shuffled)
    for domain, text in shuffled:
        stream += [DOMAIN_TOKEN[domain], *encode(text, vocabulary), EOS]
    if len(stream) < 2 * BLOCK:
        raise ValueError(f"The LM's texts hold {len(stream)} words: fewer than two windows of {BLOCK}.")
    blocks = torch.tensor(stream[: len(stream) // BLOCK * BLOCK]).view(-1, BLOCK)
    held = max(1, len(blocks) // 50)
    train, valid = blocks[held:], blocks[:held]
    config = GPT2Config(
        vocab_size=len(vocabulary),
        n_positions=BLOCK,
        n_embd=options.width,
        n_layer=options.layers,
        n_head=max(1, options.width // 64),
        bos_token_id=EOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    torch.manual_seed(options.seed)
    model = GPT2LMHeadModel(config).to(options.device)
    total = math.ceil(len(train) / options.batch_size) * options.epochs
    warmup = max(1, min(200, total // 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=0.1)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: (
            min(1.0, (step + 1) / warmup) * (0.1 + 0.45 * (1 + math.cos(math.pi * min(step, total) / total)))
        ),
    )

    def batches(data: Any, order: Any) -> Iterable[Any]:
        for start in range(0, len(data), options.batch_size):
            yield data[order[start : start + options.batch_size]].to(options.device)

    def valid_loss() -> float:
        model.eval()
        with torch.no_grad(), torch.autocast(options.device, dtype=torch.bfloat16):
            losses = [
                model(input_ids=b, labels=b).loss.item() for b in batches(valid, torch.arange(len(valid)))
            ]
        model.train()
        return sum(losses) / len(losses)

    best, best_state, history = float("inf"), None, []
    started = time.time()
    for epoch in range(options.epochs):
        for batch in batches(train, torch.randperm(len(train))):
            with torch.autocast(options.device, dtype=torch.bfloat16):
                loss = model(input_ids=batch, labels=batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
        loss = valid_loss()
        history.append(round(loss, 4))
        print(
            f"  epoch {epoch + 1}: held-out loss {loss:.3f} (perplexity {math.exp(loss):.1f}), {time.time() - started:.0f} s",
            flush=True,
        )
        if loss < best:
            best, best_state = loss, {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    model.eval()
    return model, {
        "windows": len(blocks),
        "held_out_loss": history,
        "best_perplexity": round(math.exp(best), 1),
    }


def sample(
    model: Any,
    prefixes: Sequence[Sequence[int]],
    limits: Sequence[int],
    domains: Sequence[str],
    blocked: Sequence[bool],
    options: SamplingOptions,
) -> list[list[int]]:
    """Top-k continuations of ``prefixes`` (left-padded into one batch). ROC rows stop after four
    sentence ends; WritingPrompts rows at the first sentence end once ``limits[i]`` minus the margin
    is reached. No row runs past ``limits[i]`` plus the margin, and rows in ``blocked`` never repeat
    a 3-gram, their prefix included. Specials are never drawn."""
    import torch

    rows, width = len(prefixes), max(len(p) for p in prefixes)
    ids = torch.full((rows, width), PAD, dtype=torch.long)
    mask = torch.zeros((rows, width), dtype=torch.long)
    for row, prefix in enumerate(prefixes):
        ids[row, width - len(prefix) :] = torch.tensor(prefix)
        mask[row, width - len(prefix) :] = 1
    ids, mask = ids.to(options.device), mask.to(options.device)
    seen: list[dict[tuple[int, int], set[int]]] = []
    for prefix in prefixes:
        table: dict[tuple[int, int], set[int]] = collections.defaultdict(set)
        for a, b, c in zip(prefix, prefix[1:], prefix[2:], strict=False):
            table[(a, b)].add(c)
        seen.append(table)
    histories = [list(p) for p in prefixes]
    new: list[list[int]] = [[] for _ in prefixes]
    ends = [0] * rows
    done = [False] * rows
    never = torch.tensor([PAD, UNK, EOS, *DOMAIN_TOKEN.values()], device=options.device)
    for _ in range(max(limits) + options.margin):
        # rows already done keep growing unread; their positions are held inside the window
        positions = (mask.cumsum(-1) - 1).clamp(min=0, max=BLOCK - 1)
        with torch.no_grad(), torch.autocast(options.device, dtype=torch.bfloat16):
            hidden = model.transformer(
                input_ids=ids, attention_mask=mask, position_ids=positions
            ).last_hidden_state
            logits = model.lm_head(hidden[:, -1]).float()
        logits[:, never] = -float("inf")
        ban_rows, ban_cols = [], []
        for row in range(rows):
            if blocked[row] and not done[row] and len(histories[row]) >= 2:
                for word in seen[row].get((histories[row][-2], histories[row][-1]), ()):
                    ban_rows.append(row)
                    ban_cols.append(word)
        if ban_rows:
            logits[torch.tensor(ban_rows), torch.tensor(ban_cols)] = -float("inf")
        top, where = logits.topk(min(options.top_k, logits.shape[-1]), dim=-1)
        stuck = ~torch.isfinite(top).any(-1)  # every word banned: the row ends here
        top[stuck, 0] = 0.0
        choice = torch.multinomial(torch.softmax(top / options.temperature, dim=-1), 1)
        chosen = where.gather(-1, choice)
        ids = torch.cat([ids, chosen], dim=1)
        mask = torch.cat([mask, torch.ones_like(chosen)], dim=1)
        for row, (word, is_stuck) in enumerate(zip(chosen.squeeze(1).tolist(), stuck.tolist(), strict=True)):
            if done[row]:
                continue
            if is_stuck:
                done[row] = True
                continue
            history = histories[row]
            if len(history) >= 2:
                seen[row][(history[-2], history[-1])].add(word)
            history.append(word)
            new[row].append(word)
            ends[row] += word in options.sentence_end_ids
            too_long = len(new[row]) >= limits[row] + options.margin or len(history) >= BLOCK
            if domains[row] == "roc":
                done[row] = ends[row] >= ROC_NEW_SENTENCES or too_long
            else:
                done[row] = too_long or (
                    word in options.sentence_end_ids and len(new[row]) >= limits[row] - options.margin
                )
        if all(done):
            break
    return new


def continue_stories(
    model: Any,
    targets: Sequence[dict[str, Any]],
    vocabulary: dict[str, int],
    options: SamplingOptions,
    batch_size: int,
) -> list[dict[str, Any]]:
    """Two samples per target (copy 0 with 3-gram blocking, copy 1 without), each the target's
    opening followed by the LM's continuation, cut at a sentence end."""
    words = {index: word for word, index in vocabulary.items()}
    records = []
    jobs = [(target, copy) for target in targets for copy in (0, 1)]
    for start in range(0, len(jobs), batch_size):
        batch = jobs[start : start + batch_size]
        openings, prefixes, limits = [], [], []
        for target, _ in batch:
            tokens = target["text"].split()
            openings.append(opening(tokens, target["domain"]))
            prefixes.append([DOMAIN_TOKEN[target["domain"]], *encode(" ".join(openings[-1]), vocabulary)])
            limits.append(
                max(1, min(len(tokens) - len(openings[-1]), BLOCK - 1 - len(prefixes[-1]) - options.margin))
            )
        domains = [target["domain"] for target, _ in batch]
        continuations = sample(model, prefixes, limits, domains, [copy == 0 for _, copy in batch], options)
        for (target, copy), given, continuation in zip(batch, openings, continuations, strict=True):
            tokens = [words[i] for i in continuation]
            tokens = cut_at_sentence_end(tokens, len(tokens) // 2)
            records.append(
                {
                    "story_index": target["story_index"],
                    "copy": copy,
                    "blocked": copy == 0,
                    "domain": target["domain"],
                    "fold": target["fold"],
                    "text": " ".join(given + tokens),
                    "story_sha256": text_sha256(target["text"]),
                }
            )
    return records


def read_json_lines(
    path: pathlib.Path, keys: Sequence[str], expected: str
) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of a JSON-lines file whose records hold ``keys``; errors name the file and line."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file; expected {expected}.")
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                record = json.loads(line)
            except ValueError:
                raise ValueError(f"{path}, line {number}: not a JSON object; expected {expected}.") from None
            missing = [key for key in keys if not isinstance(record, dict) or key not in record]
            if missing:
                raise ValueError(f"{path}, line {number}: no {', '.join(missing)}; expected {expected}.")
            records.append((number, record))
    return records


def read_work(work: pathlib.Path) -> tuple[list[str], list[list[str]], list[dict[str, Any]]]:
    """The LM's ROC texts, its WritingPrompts folds and the targets of an export's work folder, checked."""
    if not (work / "lm_roc.txt").is_file():
        raise FileNotFoundError(
            f"{work}: no lm_roc.txt; give the --out folder of generated_negatives.py export."
        )
    folds = sorted(work.glob("lm_wp_*.txt"))
    if len(folds) < 2:
        raise FileNotFoundError(f"{work}: {len(folds)} lm_wp_*.txt folds, export writes two or more.")
    targets = read_json_lines(work / TARGETS, TARGET_KEYS, "the targets export wrote")
    for number, target in targets:
        if "copy" in target:
            raise ValueError(
                f"{work / TARGETS}, line {number}: a sample generate wrote, not a target; rerun export."
            )
    roc = (work / "lm_roc.txt").read_text(encoding="utf-8").splitlines()
    wp = [path.read_text(encoding="utf-8").splitlines() for path in folds]
    return roc, wp, [target for _, target in targets]


def record_path(out: pathlib.Path) -> pathlib.Path:
    """Where generate's record of ``out`` (its LMs, and the samples' sha256) is written."""
    return out.with_name(out.stem + "_record.json")


def check_samples_output(work: pathlib.Path, out: pathlib.Path, overwrite: bool) -> None:
    """Fail before any work unless ``out`` is new or (with ``overwrite``) samples generate wrote.

    Never an input of the run (the work folder's texts and targets); never a file whose record
    (``<out>_record.json``) does not hold its sha256, i.e. a file generate did not write.
    """
    inputs = [work, work / "lm_roc.txt", work / TARGETS, *work.glob("lm_wp_*.txt")]
    for path in (out, record_path(out)):
        refuse_input_as_output(path, inputs, "--out")
        if path.is_dir():
            raise FileExistsError(f"--out {out}: {path} is a folder; give a file name.")
    if not out.exists() and not record_path(out).exists():
        probe_writable(out.parent, "--out")
        return
    record = record_path(out)
    try:
        recorded = json.loads(record.read_text(encoding="utf-8")).get("samples_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if not out.is_file() or recorded != hashlib.sha256(out.read_bytes()).hexdigest():
        raise FileExistsError(
            f"--out {out} (or {record.name}) exists and was not written by generate; it is never replaced. "
            "Choose another file."
        )
    if not overwrite:
        raise FileExistsError(f"--out {out} already holds samples; pass --overwrite to replace them.")


def generate(
    work: pathlib.Path,
    out: pathlib.Path,
    vocabulary_size: int,
    lm: LMOptions,
    sampling: SamplingOptions,
    batch_size: int,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Train one LM per fold and write two samples per target story to ``out`` (JSON lines), and
    ``<out>_record.json`` (the LMs' losses, the samples' sha256); both written whole."""
    check_samples_output(work, out, overwrite)
    roc, wp, targets = read_work(work)
    vocabulary = build_vocabulary(roc + [text for fold in wp for text in fold], vocabulary_size)
    sampling = replace(
        sampling, sentence_end_ids=frozenset(vocabulary[w] for w in SENTENCE_STOPS if w in vocabulary)
    )
    record: dict[str, Any] = {"vocabulary": len(vocabulary), "folds": []}
    rng = random.Random(lm.seed)
    with written_whole_file(out) as scratch, open(scratch, "w", encoding="utf-8") as handle:
        for number in range(len(wp)):
            texts = [("roc", t) for t in roc] + [
                ("wp", t) for other, fold in enumerate(wp) if other != number for t in fold
            ]
            print(f"fold {number}: an LM on {len(texts)} texts", flush=True)
            model, trained = train_lm(texts, vocabulary, lm)
            record["folds"].append(trained)
            for domain in ("roc", "wp"):
                mine = [t for t in targets if t["fold"] == number and t["domain"] == domain]
                started = time.time()
                samples = continue_stories(model, mine, vocabulary, sampling, batch_size) if mine else []
                handle.writelines(json.dumps(s) + "\n" for s in samples)
                print(f"  {domain}: {len(samples)} samples, {time.time() - started:.0f} s", flush=True)
                for shown in rng.sample(samples, min(2, len(samples))):
                    print(f"  e.g. (blocked={shown['blocked']}) {shown['text'][:400]}", flush=True)
    record["samples_sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    with written_whole_file(record_path(out)) as scratch:
        scratch.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


# --- 3. replace ---------------------------------------------------------------------------


def replace_negatives(
    corpus: Any, samples: dict[int, list[str]], fraction: float, seed: int
) -> tuple[Any, dict[str, Any]]:
    """``corpus`` (UNION pairs) with each corrupted copy replaced, with probability ``fraction``, by
    a sample of its story (the story's first replaced copy takes its first sample, and so on);
    replaced rows list the corruption ``generated``. Human rows and labels are untouched."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"--fraction must be in [0, 1], got {fraction}.")
    rng = random.Random(seed)
    used: collections.Counter[int] = collections.Counter()
    rates: list[float] = []

    def swap(row: dict) -> dict:
        index = row["story_index"]
        if row["label"] == 0 and samples.get(index) and rng.random() < fraction:
            texts = samples[index]
            row["text"] = texts[used[index] % len(texts)]
            row["corruptions"] = [GENERATED]
            used[index] += 1
            rates.append(copy_rate(row["text"], row["original"]))
        return row

    swapped = corpus.map(swap, desc="Replacing corrupted copies", load_from_cache_file=False)
    negatives = sum(1 for label in corpus["label"] if label == 0)
    summary = {
        "replaced": sum(used.values()),
        "negatives": negatives,
        "fraction": fraction,
        "seed": seed,
        "mean_4gram_copy_rate": round(sum(rates) / len(rates), 4) if rates else 0.0,
    }
    return swapped, summary


def corpus_stories(corpus: Any) -> dict[int, str]:
    """``story_index`` -> the story's text (its human row), as export read it."""
    stories: dict[int, str] = {}
    for index, text, label in zip(corpus["story_index"], corpus["text"], corpus["label"], strict=True):
        if label == 1:
            stories.setdefault(index, text)
    return stories


def read_samples(path: pathlib.Path, domains: str, stories: dict[int, str]) -> dict[int, list[str]]:
    """The samples of ``path`` per story, checked against the corpus's ``stories``.

    A sample belongs to a story when its ``story_index`` is the corpus's, its ``story_sha256`` (if
    recorded) is the story's text's, and it opens with the story's opening: samples made for
    another corpus, whose indexes mean other stories, are refused naming the line.
    """
    samples: dict[int, list[tuple[int, str]]] = collections.defaultdict(list)
    for number, record in read_json_lines(path, SAMPLE_KEYS, "the samples generate wrote"):
        index, where = record["story_index"], f"{path}, line {number}"
        story = stories.get(index)
        if story is None:
            raise ValueError(
                f"{where}: story_index {index} is not in the corpus; these samples were made for another one."
            )
        if record.get("story_sha256", text_sha256(story)) != text_sha256(story) or record["text"].split()[
            : len(opening(story.split(), record["domain"]))
        ] != opening(story.split(), record["domain"]):
            raise ValueError(
                f"{where}: the sample of story {index} continues another story than the corpus's story {index}; "
                "these samples were made for another corpus (rerun export and generate on this one)."
            )
        if domains == "both" or record["domain"] == domains:
            samples[index].append((record["copy"], record["text"]))
    return {index: [text for _, text in sorted(pairs)] for index, pairs in samples.items()}


def replace_command(args: argparse.Namespace) -> dict[str, Any]:
    """``replace``: the output folder checked, the samples matched to the corpus, all before any work."""
    from story_quality.training.negatives.build import corpus_sha256

    check_output_folder(args.output_dir, REPLACED, args.overwrite, inputs=[args.corpus, args.generated])
    probe_writable(args.output_dir)
    corpus = load_corpus(args.corpus, "corpus")
    samples = read_samples(args.generated, args.domains, corpus_stories(corpus))
    swapped, summary = replace_negatives(corpus, samples, args.fraction, args.seed)
    summary["samples_sha256"] = hashlib.sha256(args.generated.read_bytes()).hexdigest()
    summary["domains"] = args.domains
    summary["rows_sha256"] = corpus_sha256(swapped)
    with written_whole(args.output_dir) as scratch:
        swapped.save_to_disk(str(scratch))
        (scratch / SUMMARY).write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    step = commands.add_parser("export", help="write the LM's texts and the stories to continue")
    step.add_argument(
        "corpus", type=pathlib.Path, help="the corpus (build_union_data.py) whose negatives will be replaced"
    )
    step.add_argument(
        "--roc", type=pathlib.Path, required=True, help="a built corpus of ROC stories outside that corpus"
    )
    step.add_argument(
        "--wp-fold",
        type=pathlib.Path,
        action="append",
        required=True,
        help="a built corpus of one fold of the WritingPrompts stories (every segment); give two",
    )
    step.add_argument("--out", type=pathlib.Path, required=True, help="the work folder (new or empty)")
    step.add_argument("--overwrite", action="store_true", help="replace an --out holding an earlier export")
    step = commands.add_parser("generate", help="train an LM per fold and sample (a GPU if there is one)")
    step.add_argument("work", type=pathlib.Path, help="the folder written by export")
    step.add_argument(
        "--out",
        type=pathlib.Path,
        required=True,
        help="the samples, JSON lines (a new file, outside the inputs)",
    )
    step.add_argument("--overwrite", action="store_true", help="replace an --out holding earlier samples")
    step.add_argument("--vocabulary", type=at_least(1), default=40000, help="words kept (default: 40000)")
    step.add_argument("--width", type=at_least(1), default=512)
    step.add_argument("--layers", type=at_least(1), default=6)
    step.add_argument("--lm-epochs", type=at_least(1), default=10)
    step.add_argument("--lm-batch", type=at_least(1), default=128, help="windows of 256 words a step")
    step.add_argument("--lm-lr", type=positive_number, default=6e-4)
    step.add_argument("--gen-batch", type=at_least(1), default=1024, help="samples drawn together")
    step.add_argument(
        "--top-k", type=at_least(1), default=40, help="words a draw chooses among (default: 40)"
    )
    step.add_argument("--temperature", type=positive_number, default=1.0, help="above 0 (default: 1)")
    step.add_argument(
        "--margin", type=at_least(0), default=20, help="words a WritingPrompts sample may run past its story"
    )
    step.add_argument("--seed", type=int, default=7)
    step = commands.add_parser("replace", help="replace a share of the corpus's corrupted copies by samples")
    step.add_argument("corpus", type=pathlib.Path)
    step.add_argument("generated", type=pathlib.Path, help="the samples written by generate")
    step.add_argument("output_dir", type=pathlib.Path, help="a new or empty folder")
    step.add_argument(
        "--overwrite", action="store_true", help="replace an output_dir holding an earlier replace"
    )
    step.add_argument(
        "--fraction", type=float, default=0.25, help="share of corrupted copies replaced (default: 0.25)"
    )
    step.add_argument(
        "--domains", choices=["both", "roc", "wp"], default="both", help="whose copies may be replaced"
    )
    step.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        print(json.dumps(run_command(args)))
    except (OSError, ValueError) as error:  # the user's to fix: a usage error naming the file or option
        parser.error(str(error))


def run_command(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "export":
        return export(args.corpus, args.roc, args.wp_fold, args.out, args.overwrite)
    if args.command == "replace":
        return replace_command(args)
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    lm = LMOptions(args.width, args.layers, args.lm_epochs, args.lm_batch, args.lm_lr, args.seed, device)
    sampling = SamplingOptions(args.top_k, args.temperature, args.margin, device=device)
    return generate(args.work, args.out, args.vocabulary, lm, sampling, args.gen_batch, args.overwrite)


if __name__ == "__main__":
    main()
