"""shares_long_run gives difflib's answer on the release's rule, though difflib runs only on pairs a
substring search cannot settle."""

from __future__ import annotations

import random

import pytest

from story_quality.gruen import redundancy
from story_quality.gruen.redundancy import SHARED_FRACTION, longest_common_run, shares_long_run

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
