"""The story LM behind generated negatives: a word-level GPT-2 trained from scratch, and its samples.

No English LM is reachable offline, so the LM is trained on the project's own human stories, over
the normalised Penn Treebank tokens, so that a sample is tokenised exactly like the human text it
stands beside. A ROC story is continued from its first sentence to four more; a WritingPrompts
text from its first two sentences (the prompt and the story's first) to about its own length, cut
at a sentence end. Of the two samples per story (top-k 40), the first is decoded with 3-gram
blocking (no 3-gram twice, a common setting of story generators) and the second without.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import inspect
import math
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from story_quality.union.normalization import SENTENCE_STOPS

SPECIALS = ["<pad>", "<unk>", "<eos>", "<roc>", "<wp>"]
PAD, UNK, EOS = 0, 1, 2
DOMAIN_TOKEN = {"roc": 3, "wp": 4}
BLOCK = 256  # the LM's window in words; every sample stays inside it
ROC_NEW_SENTENCES = 4  # a ROC story is five sentences; the first is given


@dataclass
class LMOptions:
    width: int = 512
    layers: int = 6
    epochs: int = 10
    batch_size: int = 128
    learning_rate: float = 6e-4
    seed: int = 7
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.width % self.heads:
            raise ValueError(
                f"--width: {self.width} does not split evenly into its {self.heads} attention heads "
                f"(one per 64 widths); take a multiple of {self.heads}, such as {self.width - self.width % self.heads}"
            )

    @property
    def heads(self) -> int:
        """Attention heads: one per 64 widths, as GPT-2's 768 / 12."""
        return max(1, self.width // 64)


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


def windows(texts: Sequence[tuple[str, str]], vocabulary: dict[str, int], seed: int) -> list[list[int]]:
    """The texts shuffled, each as its domain word, its words and ``EOS``, packed into windows of ``BLOCK``."""
    stream: list[int] = []
    shuffled = list(texts)
    random.Random(seed).shuffle(shuffled)
    for domain, text in shuffled:
        stream += [DOMAIN_TOKEN[domain], *encode(text, vocabulary), EOS]
    if len(stream) < 2 * BLOCK:
        raise ValueError(f"The LM's texts hold {len(stream)} words: fewer than two windows of {BLOCK}.")
    return [stream[start : start + BLOCK] for start in range(0, len(stream) // BLOCK * BLOCK, BLOCK)]


def left_padded(prefixes: Sequence[Sequence[int]], device: str) -> tuple[Any, Any]:
    """``prefixes`` as one batch of word ids padded on the left, and its attention mask."""
    import torch

    rows, width = len(prefixes), max(len(p) for p in prefixes)
    ids = torch.full((rows, width), PAD, dtype=torch.long)
    mask = torch.zeros((rows, width), dtype=torch.long)
    for row, prefix in enumerate(prefixes):
        ids[row, width - len(prefix) :] = torch.tensor(prefix)
        mask[row, width - len(prefix) :] = 1
    return ids.to(device), mask.to(device)


def trigram_tables(prefixes: Sequence[Sequence[int]]) -> list[dict[tuple[int, int], set[int]]]:
    """Per prefix, the words already seen after each pair of words: what 3-gram blocking bans."""
    tables = []
    for prefix in prefixes:
        table: dict[tuple[int, int], set[int]] = collections.defaultdict(set)
        for a, b, c in zip(prefix, prefix[1:], prefix[2:], strict=False):
            table[(a, b)].add(c)
        tables.append(table)
    return tables


def cache_argument(model: Any) -> str:
    """The forward's name for the cached keys and values: transformers renamed past_key_values to cache."""
    return (
        "cache" if "cache" in inspect.signature(model.transformer.forward).parameters else "past_key_values"
    )


def lm_training_precision(device: str) -> contextlib.AbstractContextManager:
    """bf16 autocast on a GPU that has bf16, else fp32: fp16 would want a gradient scaler, and bf16
    autocast on a CPU without bf16 instructions ran 16 times slower than fp32."""
    import torch

    bf16 = device.startswith("cuda") and torch.cuda.is_bf16_supported()
    return torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def train_lm(
    texts: Sequence[tuple[str, str]], vocabulary: dict[str, int], options: LMOptions
) -> tuple[Any, dict[str, Any]]:
    """A GPT-2 trained from scratch on ``(domain, text)`` pairs packed into windows of ``BLOCK``
    words; returns the model of the best epoch on 2 % of the windows held out, and its record."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from story_quality.batching import progress

    blocks = torch.tensor(windows(texts, vocabulary, options.seed))
    held = max(1, len(blocks) // 50)
    train, valid = blocks[held:], blocks[:held]
    config = GPT2Config(
        vocab_size=len(vocabulary),
        n_positions=BLOCK,
        n_embd=options.width,
        n_layer=options.layers,
        n_head=options.heads,
        bos_token_id=EOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    torch.manual_seed(options.seed)
    model = GPT2LMHeadModel(config).to(options.device)
    steps = math.ceil(len(train) / options.batch_size)  # an epoch's
    total = steps * options.epochs
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
        with torch.no_grad(), lm_training_precision(options.device):
            losses = [
                model(input_ids=b, labels=b).loss.item() for b in batches(valid, torch.arange(len(valid)))
            ]
        model.train()
        return sum(losses) / len(losses)

    best, best_state, history = float("inf"), None, []
    training_precision = lm_training_precision(options.device)
    started = time.time()
    for epoch in range(options.epochs):
        order = torch.randperm(len(train))
        for batch in progress(batches(train, order), total=steps, desc=f"LM epoch {epoch + 1}", unit="step"):
            with training_precision:
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

    rows = len(prefixes)
    ids, mask = left_padded(prefixes, options.device)
    seen = trigram_tables(prefixes)
    histories = [list(p) for p in prefixes]
    new: list[list[int]] = [[] for _ in prefixes]
    ends = [0] * rows
    done = [False] * rows
    never = torch.tensor([PAD, UNK, EOS, *DOMAIN_TOKEN.values()], device=options.device)
    past, cache = None, cache_argument(model)  # the keys and values of every word read so far
    for _ in range(max(limits) + options.margin):
        # rows already done keep growing unread; their positions are held inside the window
        positions = (mask.cumsum(-1) - 1).clamp(min=0, max=BLOCK - 1)
        if past is not None:  # the words before are cached: read only the newest
            ids, positions = ids[:, -1:], positions[:, -1:]
        with torch.no_grad(), lm_training_precision(options.device):
            output = model.transformer(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                use_cache=True,
                **{cache: past},
            )
            past = output[cache]
            logits = model.lm_head(output.last_hidden_state[:, -1]).float()
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
        ids = chosen
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
