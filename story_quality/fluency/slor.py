"""Reader (b): SLOR of a sentence under a trigram model of human stories, counted, not trained.

The model counts the normalised sentences (:mod:`story_quality.fluency.text`) of human stories,
each sentence apart, after two start symbols. Its smoothing is interpolated Witten-Bell, down to a
unigram model that is itself interpolated with a uniform share of the vocabulary and one unknown
word (so every sentence has a probability)::

    P1(w)      = (c(w)     + T()   / V)          / (N      + T())
    P2(w | v)  = (c(v w)   + T(v)  * P1(w))      / (c(v .)  + T(v))     (P1 where v was never a history)
    P3(w | uv) = (c(u v w) + T(uv) * P2(w | v))  / (c(uv .) + T(uv))    (P2 where uv was never one)

``c`` counts, ``T(h)`` the distinct words seen after history ``h`` (``T()`` the distinct words),
``N`` the words counted, ``V`` the distinct words plus the unknown one. A sentence's SLOR
(Lau, Clark & Lappin 2017) is its log-probability under the trigram model less its
log-probability under ``P1``, over its length in words: likelihood with word frequency and
length taken out.

The counts live outside the package (``benchmarks/build_slor_lm.py`` writes them, tens of MB):
``slor.json`` (what the folder is, its vocabulary) and ``slor_counts.npz`` (the tables).
"""

from __future__ import annotations

import itertools
import json
import pathlib
from collections.abc import Iterable, Sequence

import numpy as np

START, UNKNOWN = "<s>", "<unk>"
MARKER_FILE, COUNTS_FILE = "slor.json", "slor_counts.npz"
READER_KIND = "slor-trigram"


def _keys(ids: np.ndarray, size: int) -> np.ndarray:
    """One int64 key per row of word ids (each below ``size``)."""
    key = np.zeros(len(ids), dtype=np.int64)
    for column in range(ids.shape[1]):
        key = key * size + ids[:, column]
    return key


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, counts = np.unique(keys, return_counts=True)
    return unique, counts.astype(np.int64)


def _lookup(sorted_keys: np.ndarray, values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``values`` at ``keys`` (0 for a key that is not there)."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=values.dtype)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[at] == keys, values[at], 0)


class SlorModel:
    """A Witten-Bell trigram model of whitespace-tokenised sentences and the SLOR it gives them."""

    def __init__(self, words: Sequence[str], tables: dict[str, np.ndarray]) -> None:
        if list(words[:2]) != [START, UNKNOWN]:
            raise ValueError(f"a SLOR vocabulary opens with {START!r} and {UNKNOWN!r}, got {list(words[:2])}")
        self.words = list(words)
        self.ids = {word: i for i, word in enumerate(self.words)}
        self.size = len(self.words)
        self.tables = tables
        unigram = tables["unigram"].astype(np.float64)
        total, types = unigram.sum(), np.count_nonzero(unigram)
        # V: the words seen plus the unknown one (the start symbol is never predicted)
        self.log_p1 = np.log((unigram + types / (types + 1)) / (total + types))

    @classmethod
    def count(cls, sentences: Iterable[str]) -> SlorModel:
        """The model of these sentences (each normalised, its words apart)."""
        ids: dict[str, int] = {START: 0, UNKNOWN: 1}
        rows: list[list[int]] = []
        for sentence in sentences:
            rows.append([ids.setdefault(word, len(ids)) for word in sentence.split()])
        if not any(rows):
            raise ValueError("a SLOR model needs at least one word to count")
        words = sorted(ids, key=ids.__getitem__)
        trigrams = cls._trigrams(rows, len(words))
        unigram = np.bincount(trigrams[:, 2], minlength=len(words)).astype(np.int64)
        bi_keys, bi_counts = _counted(_keys(trigrams[:, 1:], len(words)))
        tri_keys, tri_counts = _counted(_keys(trigrams, len(words)))
        bi_hist = bi_keys // len(words)
        tri_hist_keys = tri_keys // len(words)
        tri_hist, tri_hist_types = _counted(tri_hist_keys)
        return cls(
            words,
            {
                "unigram": unigram,
                "bigram_keys": bi_keys,
                "bigram_counts": bi_counts,
                "history1_total": np.bincount(bi_hist, weights=bi_counts, minlength=len(words)).astype(
                    np.int64
                ),
                "history1_types": np.bincount(bi_hist, minlength=len(words)).astype(np.int64),
                "trigram_keys": tri_keys,
                "trigram_counts": tri_counts,
                "history2_keys": tri_hist,
                "history2_types": tri_hist_types,
                "history2_total": np.add.reduceat(tri_counts, np.searchsorted(tri_hist_keys, tri_hist))
                if len(tri_counts)
                else np.zeros(0, dtype=np.int64),
            },
        )

    @staticmethod
    def _trigrams(rows: Sequence[Sequence[int]], size: int) -> np.ndarray:
        """Every (u, v, w) of the sentences, each sentence after two start symbols."""
        if size**3 >= 2**62:
            raise ValueError(f"a SLOR vocabulary of {size} words is too large for its int64 keys")
        rows = [row for row in rows if row]
        if not rows:
            return np.zeros((0, 3), dtype=np.int64)
        lengths = np.array([len(row) for row in rows], dtype=np.int64)
        flat = np.fromiter(itertools.chain.from_iterable([0, 0, *row] for row in rows), dtype=np.int64)
        starts = np.cumsum(lengths + 2) - (lengths + 2)  # where each padded sentence begins in flat
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        at = np.repeat(starts + 2, lengths) + within  # each predicted word's place in flat
        return np.stack([flat[at - 2], flat[at - 1], flat[at]], axis=1)

    def sentence_ids(self, sentence: str) -> list[int]:
        return [self.ids.get(word, 1) for word in sentence.split()]

    def log_probabilities(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each sentence's natural-log probability under the trigram model and under ``P1``, and its
        length in words (a sentence with no words: 0, 0, 0)."""
        rows = [self.sentence_ids(sentence) for sentence in sentences]
        trigrams = self._trigrams(rows, self.size)
        u, v, w = trigrams[:, 0], trigrams[:, 1], trigrams[:, 2]
        t = self.tables
        log_p1 = self.log_p1[w]
        c_vw = _lookup(t["bigram_keys"], t["bigram_counts"], v * self.size + w)
        total1, types1 = t["history1_total"][v], t["history1_types"][v]
        p2 = np.where(
            total1 > 0, (c_vw + types1 * np.exp(log_p1)) / np.maximum(total1 + types1, 1), np.exp(log_p1)
        )
        history2 = u * self.size + v
        c_uvw = _lookup(t["trigram_keys"], t["trigram_counts"], history2 * self.size + w)
        total2 = _lookup(t["history2_keys"], t["history2_total"], history2)
        types2 = _lookup(t["history2_keys"], t["history2_types"], history2)
        p3 = np.where(total2 > 0, (c_uvw + types2 * p2) / np.maximum(total2 + types2, 1), p2)
        lengths = np.array([len(row) for row in rows], dtype=np.int64)
        owner = np.repeat(np.arange(len(rows)), lengths)
        model = np.bincount(owner, weights=np.log(p3), minlength=len(rows))
        unigram = np.bincount(owner, weights=log_p1, minlength=len(rows))
        return model, unigram, lengths

    def sentence_slor(self, sentences: Sequence[str]) -> np.ndarray:
        """Each sentence's SLOR (0 for a sentence with no words)."""
        model, unigram, lengths = self.log_probabilities(sentences)
        return np.where(lengths > 0, (model - unigram) / np.maximum(lengths, 1), 0.0)

    def write(self, folder: str | pathlib.Path, described: dict | None = None) -> pathlib.Path:
        folder = pathlib.Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(folder / COUNTS_FILE, **self.tables)
        record = {"story_quality_reader": READER_KIND, **(described or {}), "words": self.words}
        (folder / MARKER_FILE).write_text(json.dumps(record) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def read(cls, folder: str | pathlib.Path) -> SlorModel:
        problem = slor_problem(folder)
        if problem is not None:
            raise ValueError(f"not a SLOR reader: {problem}")
        record = json.loads((pathlib.Path(folder) / MARKER_FILE).read_text(encoding="utf-8"))
        with np.load(pathlib.Path(folder) / COUNTS_FILE) as tables:
            return cls(record["words"], {name: tables[name] for name in tables.files})


def slor_problem(folder: str | pathlib.Path) -> str | None:
    """Why ``folder`` is not a SLOR reader's folder, or None when it is one."""
    marker = pathlib.Path(folder) / MARKER_FILE
    if not marker.is_file() or not (pathlib.Path(folder) / COUNTS_FILE).is_file():
        return f"{folder} lacks {MARKER_FILE} or {COUNTS_FILE}"
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except ValueError as error:
        return f"{marker} is not JSON ({error})"
    if record.get("story_quality_reader") != READER_KIND:
        return f"{marker} does not mark a {READER_KIND} reader"
    return None
