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
    # 2. train the LM and sample two continuations a story (a GPU: about 9 minutes on one H100)
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
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

SENTENCE_ENDS = frozenset({".", "!", "?"})
SPECIALS = ["<pad>", "<unk>", "<eos>", "<roc>", "<wp>"]
PAD, UNK, EOS = 0, 1, 2
DOMAIN_TOKEN = {"roc": 3, "wp": 4}
BLOCK = 256  # the LM's window in words; every sample stays inside it
ROC_NEW_SENTENCES = 4  # a ROC story is five sentences; the first is given
GENERATED = "generated"  # the corruption name replaced rows carry


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
        if word in SENTENCE_ENDS:
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
        if end and words[end - 1] in SENTENCE_ENDS:
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


# --- 1. export ----------------------------------------------------------------------------


def _human_texts(folder: pathlib.Path) -> list[str]:
    import datasets

    corpus = datasets.load_from_disk(str(folder))
    return [text for text, label in zip(corpus["text"], corpus["label"], strict=True) if label == 1]


def export(
    corpus_dir: pathlib.Path, roc_dir: pathlib.Path, wp_fold_dirs: Sequence[pathlib.Path], out: pathlib.Path
) -> dict[str, Any]:
    """Write ``lm_roc.txt``, ``lm_wp_<fold>.txt`` and ``targets.jsonl`` (one line per story of the
    corpus: ``story_index``, ``domain``, ``fold``, ``text``) into ``out``."""
    import datasets

    if len(wp_fold_dirs) < 2:
        raise ValueError(
            "--wp-fold: give two folds (or more), each continued by an LM trained on the others."
        )
    out.mkdir(parents=True, exist_ok=True)
    roc = _human_texts(roc_dir)
    folds = [_human_texts(folder) for folder in wp_fold_dirs]
    (out / "lm_roc.txt").write_text("".join(text + "\n" for text in roc), encoding="utf-8")
    for number, texts in enumerate(folds):
        (out / f"lm_wp_{number}.txt").write_text("".join(text + "\n" for text in texts), encoding="utf-8")
    fold_of = {text: number for number, texts in enumerate(folds) for text in texts}
    roc_known = set(roc)
    corpus = datasets.load_from_disk(str(corpus_dir))
    counts: collections.Counter[str] = collections.Counter()
    seen: set[int] = set()
    with open(out / "targets.jsonl", "w", encoding="utf-8") as handle:
        for row in corpus:
            if row["label"] != 1 or row["story_index"] in seen:
                continue
            seen.add(row["story_index"])
            text = row["text"]
            if text in roc_known:
                raise ValueError(
                    f"story {row['story_index']} of {corpus_dir} is also in --roc {roc_dir}: the LM would have read it."
                )
            if text in fold_of:
                domain, fold = "wp", fold_of[text]
            else:
                domain, fold = "roc", row["story_index"] % len(folds)
            counts[domain] += 1
            handle.write(
                json.dumps({"story_index": row["story_index"], "domain": domain, "fold": fold, "text": text})
                + "\n"
            )
    return {"lm_texts": {"roc": len(roc), "wp_folds": [len(f) for f in folds]}, "targets": dict(counts)}


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
    """>>> encode("a z", {"a": 5})
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
            keep = min(first_sentences(tokens, 1 if target["domain"] == "roc" else 2), len(tokens) // 2)
            openings.append(tokens[:keep])
            prefixes.append([DOMAIN_TOKEN[target["domain"]], *encode(" ".join(tokens[:keep]), vocabulary)])
            limits.append(max(1, min(len(tokens) - keep, BLOCK - 1 - len(prefixes[-1]) - options.margin)))
        domains = [target["domain"] for target, _ in batch]
        continuations = sample(model, prefixes, limits, domains, [copy == 0 for _, copy in batch], options)
        for (target, copy), opening, continuation in zip(batch, openings, continuations, strict=True):
            tokens = [words[i] for i in continuation]
            tokens = cut_at_sentence_end(tokens, len(tokens) // 2)
            records.append(
                {
                    "story_index": target["story_index"],
                    "copy": copy,
                    "blocked": copy == 0,
                    "domain": target["domain"],
                    "fold": target["fold"],
                    "text": " ".join(opening + tokens),
                }
            )
    return records


def generate(
    work: pathlib.Path,
    out: pathlib.Path,
    vocabulary_size: int,
    lm: LMOptions,
    sampling: SamplingOptions,
    batch_size: int,
) -> dict[str, Any]:
    """Train one LM per fold and write two samples per target story to ``out`` (JSON lines)."""
    roc = (work / "lm_roc.txt").read_text(encoding="utf-8").splitlines()
    wp = [path.read_text(encoding="utf-8").splitlines() for path in sorted(work.glob("lm_wp_*.txt"))]
    targets = [json.loads(line) for line in (work / "targets.jsonl").read_text(encoding="utf-8").splitlines()]
    vocabulary = build_vocabulary(roc + [text for fold in wp for text in fold], vocabulary_size)
    sampling = replace(
        sampling, sentence_end_ids=frozenset(vocabulary[w] for w in SENTENCE_ENDS if w in vocabulary)
    )
    record: dict[str, Any] = {"vocabulary": len(vocabulary), "folds": []}
    rng = random.Random(lm.seed)
    with open(out, "w", encoding="utf-8") as handle:
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


def read_samples(path: pathlib.Path, domains: str) -> dict[int, list[str]]:
    samples: dict[int, list[tuple[int, str]]] = collections.defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if domains == "both" or record["domain"] == domains:
            samples[record["story_index"]].append((record["copy"], record["text"]))
    return {index: [text for _, text in sorted(pairs)] for index, pairs in samples.items()}


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
    step.add_argument("--out", type=pathlib.Path, required=True, help="the work folder")
    step = commands.add_parser("generate", help="train an LM per fold and sample (a GPU if there is one)")
    step.add_argument("work", type=pathlib.Path, help="the folder written by export")
    step.add_argument("--out", type=pathlib.Path, required=True, help="the samples, JSON lines")
    step.add_argument("--vocabulary", type=int, default=40000, help="words kept (default: 40000)")
    step.add_argument("--width", type=int, default=512)
    step.add_argument("--layers", type=int, default=6)
    step.add_argument("--lm-epochs", type=int, default=10)
    step.add_argument("--lm-batch", type=int, default=128, help="windows of 256 words a step")
    step.add_argument("--lm-lr", type=float, default=6e-4)
    step.add_argument("--gen-batch", type=int, default=1024, help="samples drawn together")
    step.add_argument("--top-k", type=int, default=40)
    step.add_argument("--temperature", type=float, default=1.0)
    step.add_argument(
        "--margin", type=int, default=20, help="words a WritingPrompts sample may run past its story"
    )
    step.add_argument("--seed", type=int, default=7)
    step = commands.add_parser("replace", help="replace a share of the corpus's corrupted copies by samples")
    step.add_argument("corpus", type=pathlib.Path)
    step.add_argument("generated", type=pathlib.Path, help="the samples written by generate")
    step.add_argument("output_dir", type=pathlib.Path)
    step.add_argument(
        "--fraction", type=float, default=0.25, help="share of corrupted copies replaced (default: 0.25)"
    )
    step.add_argument(
        "--domains", choices=["both", "roc", "wp"], default="both", help="whose copies may be replaced"
    )
    step.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.command == "export":
        print(json.dumps(export(args.corpus, args.roc, args.wp_fold, args.out)))
    elif args.command == "generate":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        lm = LMOptions(args.width, args.layers, args.lm_epochs, args.lm_batch, args.lm_lr, args.seed, device)
        sampling = SamplingOptions(args.top_k, args.temperature, args.margin, device=device)
        record = generate(args.work, args.out, args.vocabulary, lm, sampling, args.gen_batch)
        args.out.with_name(args.out.stem + "_record.json").write_text(
            json.dumps(record, indent=1), encoding="utf-8"
        )
        print(json.dumps(record))
    else:
        import datasets

        from story_quality.training.negatives.build import corpus_sha256

        corpus = datasets.load_from_disk(str(args.corpus))
        swapped, summary = replace_negatives(
            corpus, read_samples(args.generated, args.domains), args.fraction, args.seed
        )
        summary["samples_sha256"] = hashlib.sha256(args.generated.read_bytes()).hexdigest()
        summary["domains"] = args.domains
        swapped.save_to_disk(str(args.output_dir))
        summary["rows_sha256"] = corpus_sha256(swapped)
        (args.output_dir / "generated_negatives_summary.json").write_text(
            json.dumps(summary, indent=1), encoding="utf-8"
        )
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
