"""Keyword neighbours (the donors of related-story substitution) against a brute-force cosine."""

import functools
import math
import random

import pytest

from story_quality.training.negatives.related_stories import nearest_stories


def brute_force(keywords, n):
    """Textbook idf-weighted cosine over every pair, best first; scores within 1e-12 tie and go by index.

    The tolerance matters: equal cosines summed in another order differ in the last bits, and
    set order (hence summation order) changes with PYTHONHASHSEED.
    """
    documents = len(keywords)
    df = {w: sum(w in k for k in keywords) for w in set().union(*keywords)}
    idf = {w: math.log(documents / d) + 1 for w, d in df.items()}

    def cosine(a, b):
        shared = math.fsum(idf[w] ** 2 for w in a & b)
        norm = math.sqrt(math.fsum(idf[w] ** 2 for w in a)) * math.sqrt(math.fsum(idf[w] ** 2 for w in b))
        return shared / norm if norm else 0.0

    def better_first(x, y):
        (score_x, index_x), (score_y, index_y) = x, y
        if abs(score_x - score_y) > 1e-12:
            return -1 if score_x > score_y else 1
        return index_x - index_y

    out = []
    for i, mine in enumerate(keywords):
        scored = [(cosine(mine, other), j) for j, other in enumerate(keywords) if j != i]
        ranked = sorted(scored, key=functools.cmp_to_key(better_first))
        out.append([j for score, j in ranked[:n] if score > 0])
    return out


def test_neighbours_equal_a_brute_force_cosine_with_ties_broken_by_index():
    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(30)]
    keywords = [set(rng.sample(vocabulary, rng.randint(0, 6))) for _ in range(300)]
    keywords += [set(keywords[5]), set(keywords[5])]  # exact ties
    assert nearest_stories(keywords, 7) == brute_force(keywords, 7)


def test_topic_neighbours_and_edge_cases():
    dogs = [{"dog", "park", "ball"}, {"dog", "bone", "park"}, {"dog", "ball", "walk"}]
    cars = [{"car", "road", "engine"}, {"car", "tire", "road"}]
    neighbours = nearest_stories(dogs + cars + [set()], 2)
    assert all(set(found) <= {0, 1, 2} for found in neighbours[:3])
    assert all(set(found) <= {3, 4} for found in neighbours[3:5])
    assert neighbours[5] == []  # no keyword: no neighbour, never itself
    assert nearest_stories([set(), set()], 3) == [[], []]
    assert nearest_stories([{"a"}], 3) == [[]]
    with pytest.raises(ValueError, match="at least 1"):
        nearest_stories([{"a"}], 0)
