"""The redundancy rules' shortcuts give the plain rules' answers: shares_long_run difflib's, though
difflib runs only on pairs a substring search cannot settle; edit_distance_below the distance's,
though the distance is computed only where the difference in length leaves the answer open."""

from __future__ import annotations

import random

import pytest

from story_quality.gruen import redundancy
from story_quality.gruen.redundancy import (
    EDIT_FRACTION,
    SHARED_FRACTION,
    edit_distance,
    edit_distance_below,
    longest_common_run,
    shares_long_run,
)

WORDS = "the a cat dog sat ran on to mat home store he she went was happy sad and then big".split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + rng.choice(".!?")


def _edited(rng: random.Random, text: str, edits: int) -> str:
    chars = list(text)
    for _ in range(edits):
        i = rng.randrange(len(chars) + 1)
        kind = rng.randrange(3)
        if kind == 0:
            chars.insert(i, rng.choice("abcdefgh ."))
        elif chars and i < len(chars):
            if kind == 1:
                del chars[i]
            else:
                chars[i] = rng.choice("abcdefgh ")
    return "".join(chars)


def _pairs() -> list[tuple[str, str]]:
    rng = random.Random(7)
    pairs = []
    for _ in range(1500):
        a = _sentence(rng, rng.randint(1, 60))  # up to ~300 characters: difflib's autojunk from 200
        kind = rng.randrange(3)
        if kind == 0:
            b = _sentence(rng, rng.randint(1, 60))
        elif kind == 1:
            b = _edited(rng, a, rng.randint(0, 12))
        else:  # a shared run inside other words
            b = _sentence(rng, rng.randint(0, 8)) + " " + a[: rng.randint(0, len(a))] + _sentence(rng, 3)
        pairs.append((a, b))
    return pairs


def _plain_rule(a, b) -> bool:
    return longest_common_run(a, b) > SHARED_FRACTION * min(len(a), len(b))


def test_characters_and_words_give_difflibs_answer(monkeypatch):
    ran_difflib = []
    original = redundancy.longest_common_run
    monkeypatch.setattr(
        redundancy, "longest_common_run", lambda a, b: ran_difflib.append(1) or original(a, b)
    )
    answers = []
    for a, b in _pairs():
        for x, y in ((a, b), (b, a), (a.split(), b.split()), (b.split(), a.split())):
            answers.append(shares_long_run(x, y))
            assert answers[-1] == _plain_rule(x, y), (x, y)
    # Both answers occur, and the search settles most pairs without difflib.
    assert 0 < sum(answers) < len(answers)
    assert 0 < len(ran_difflib) < len(answers) / 2


@pytest.mark.parametrize(
    "a, b",
    [
        ("", "abc"),
        ("a", "a"),
        ("ab", "ba"),
        ("x" * 250, "y" + "x" * 240),  # long, one popular character: difflib's junk heuristic
        (("ab " * 90).strip(), ("ab " * 85).strip() + " cd"),
    ],
)
def test_edges_give_difflibs_answer(a, b):
    assert shares_long_run(a, b) == _plain_rule(a, b)
    assert shares_long_run(a.split(), b.split()) == _plain_rule(a.split(), b.split())


def test_edit_distance_below_gives_the_distances_answer(monkeypatch):
    computed = []
    original = redundancy.edit_distance
    monkeypatch.setattr(redundancy, "edit_distance", lambda a, b: computed.append(1) or original(a, b))
    answers = []
    for a, b in _pairs():
        distance = original(a, b)
        longer = max(len(a), len(b))
        # the rule's limit, and limits on both sides of the distance, whole and fractional
        for limit in {EDIT_FRACTION * longer, distance, distance + 0.5, distance + 1, max(0, distance - 1)}:
            answers.append(edit_distance_below(a, b, limit))
            assert answers[-1] == (distance < limit), (a, b, limit)
    assert 0 < sum(answers) < len(answers)
    assert 0 < len(computed) < len(answers)  # the bound settles some answers, not all


@pytest.mark.parametrize(
    "a, b, limit",
    [("", "", 0), ("", "", 1), ("", "abc", 3), ("", "abc", 3.5), ("abc", "cab", 2), ("abc", "cab", 2.5)],
)
def test_edit_distance_below_at_the_edges(a, b, limit):
    assert edit_distance_below(a, b, limit) == (edit_distance(a, b) < limit)


def _myers_edit_distance(a: str, b: str) -> int:
    """The pure-Python edit distance the library ran before rapidfuzz (Myers' bit-parallel
    algorithm over Python integers): the slow reference."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    full, last = (1 << len(a)) - 1, 1 << (len(a) - 1)
    match: dict[str, int] = {}
    for i, char in enumerate(a):
        match[char] = match.get(char, 0) | (1 << i)
    plus, minus, score = full, 0, len(a)
    for char in b:
        eq = match.get(char, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        h_plus = minus | ~(xh | plus)
        h_minus = plus & xh
        score += 1 if h_plus & last else -1 if h_minus & last else 0
        h_plus = ((h_plus << 1) | 1) & full
        h_minus = (h_minus << 1) & full
        plus = (h_minus | ~(xv | h_plus)) & full
        minus = h_plus & xv
    return score


def test_rapidfuzz_gives_todays_flags_on_generated_pairs(monkeypatch):
    rng = random.Random(11)
    pairs = list(_pairs())
    for _ in range(300):  # longer than one 64-bit word, non-ASCII, and edits of every size
        a = _sentence(rng, rng.randint(1, 40)) + rng.choice(["", " caf\u00e9 \u00fcber", " \u4e2d\u6587"])
        pairs.append((a, _edited(rng, a, rng.randint(0, len(a)))))
    fast = [redundancy.redundancy_flags(a, b) for a, b in pairs]
    assert [edit_distance(a, b) for a, b in pairs] == [_myers_edit_distance(a, b) for a, b in pairs]
    monkeypatch.setattr(redundancy, "edit_distance", _myers_edit_distance)
    assert fast == [redundancy.redundancy_flags(a, b) for a, b in pairs]
    assert len(set(fast)) >= 3, "the pairs must raise several flag counts"


def _plain_flags(a: str, b: str) -> int:
    """The release's four rules and its containment rule written out plainly, per pair: the reference."""
    a, b = a.strip(), b.strip()
    if a in b or b in a:
        return 4
    a_words, b_words = a.split(), b.split()
    if max(len(a_words), len(b_words)) < 5:
        return 0
    shorter_chars, shorter_words = min(len(a), len(b)), min(len(a_words), len(b_words))
    return (
        int(longest_common_run(a, b) > SHARED_FRACTION * shorter_chars)
        + int(longest_common_run(a_words, b_words) > SHARED_FRACTION * shorter_words)
        + int(_myers_edit_distance(a, b) < EDIT_FRACTION * max(len(a), len(b)))
        + int(sum(word in set(b_words) for word in a_words) > SHARED_FRACTION * shorter_words)
    )


def test_a_texts_score_is_the_plain_rules_summed_over_its_pairs():
    rng = random.Random(5)
    scores = []
    for _ in range(60):
        sentences = [_sentence(rng, rng.randint(2, 12)) for _ in range(rng.randint(1, 8))]
        sentences += [
            " " + _edited(rng, rng.choice(sentences), rng.randint(0, 6)) for _ in range(rng.randint(0, 4))
        ]
        rng.shuffle(sentences)
        plain = sum(
            _plain_flags(sentences[i], sentences[j])
            for i in range(len(sentences))
            for j in range(i + 1, len(sentences))
        )
        scores.append(redundancy.redundancy_score(sentences))
        assert scores[-1] == -0.1 * plain + 0.0, sentences
    assert len(set(scores)) > 5
