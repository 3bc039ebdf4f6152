"""Each story's nearest neighbours by shared keywords: donors for hard sentence substitution.

UNION's sentence substitution takes sentences of a *random* story, which a classifier spots
by topic alone (a kitten story suddenly about a car). Generated stories fail more subtly:
the sentences stay on topic but do not follow. Drawing the donor among the stories that share
the most keywords gives negatives of that kind. Similarity is the cosine of idf-weighted
keyword sets (a keyword counts once per story), computed as sparse products in chunks, so a
90k-story corpus needs a few hundred MB, not a dense 90k x 90k matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from datasets.utils import tqdm

CHUNK_ROWS = 256


def nearest_stories(keywords: Sequence[set[str]], n: int) -> list[list[int]]:
    """For each story, the indices of the ``n`` other stories most similar to it, best first.

    Ties keep the lower index first, so the result is deterministic. Stories that share no
    keyword with a story are never among its neighbours (the list is then shorter).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    vocabulary = {word: i for i, word in enumerate(sorted(set().union(*keywords)))}
    if not vocabulary:
        return [[] for _ in keywords]
    document_frequency = [0] * len(vocabulary)
    for words in keywords:
        for word in words:
            document_frequency[vocabulary[word]] += 1
    idf = [math.log(len(keywords) / df) + 1.0 for df in document_frequency]
    rows, cols, values = [], [], []
    for row, words in enumerate(keywords):
        columns = sorted(vocabulary[w] for w in words)
        norm = math.sqrt(sum(idf[c] ** 2 for c in columns)) or 1.0
        rows += [row] * len(columns)
        cols += columns
        values += [idf[c] / norm for c in columns]
    rows_t, cols_t = torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)
    values_t = torch.tensor(values, dtype=torch.float64)
    shape = (len(keywords), len(vocabulary))
    matrix = torch.sparse_coo_tensor(torch.stack([rows_t, cols_t]), values_t, shape, check_invariants=True)
    matrix = matrix.coalesce()
    # Subtracting a multiple of the index far below any real score gap breaks ties by index,
    # so topk's choice among equal scores cannot depend on threads or hardware.
    tie_break = (torch.arange(len(keywords), dtype=torch.float64) * 1e-13)[:, None]
    k = min(n, len(keywords) - 1)
    neighbours: list[list[int]] = []
    for start in tqdm(range(0, len(keywords), CHUNK_ROWS), desc="Finding related stories", unit="chunk"):
        stop = min(start + CHUNK_ROWS, len(keywords))
        selected = (rows_t >= start) & (rows_t < stop)
        chunk = torch.zeros(len(vocabulary), stop - start, dtype=torch.float64)  # columns = stories
        chunk[cols_t[selected], rows_t[selected] - start] = values_t[selected]
        similarity = torch.sparse.mm(matrix, chunk) - tie_break  # (stories, chunk)
        similarity[torch.arange(start, stop), torch.arange(stop - start)] = -1.0  # never itself
        best = torch.topk(similarity, k, dim=0)
        for indices, scores in zip(best.indices.T.tolist(), best.values.T.tolist(), strict=True):
            neighbours.append([index for index, score in zip(indices, scores, strict=True) if score > 0])
    return neighbours
