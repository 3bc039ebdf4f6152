"""Grammar-breaking edits: sentences that break as the story generators of 2019-2020 broke them.

UNION's corruptions keep every sentence well formed (whole sentences repeated, swapped in,
reordered, negated), and a checkpoint trained on them hardly sees grammar; OpenMEVA's MANS
ratings mark stories down for broken sentences. Each edit here changes the words of one
sentence and nothing outside it, the sentence's final punctuation kept:

- ``drop``: m ~ U{1..max(1, span // 8)} words left out (sentences of 4 words or more);
- ``double``: one word written twice ("he went to to the store");
- ``swap``: two adjacent different words exchanged ("he to went the store");
- ``agreement``: one word's inflection or agreement broken: a verb put in its base form where
  it was inflected (``went`` -> ``go``, ``walks`` -> ``walk``), an uninflected verb given
  ``-s`` (``they walk`` -> ``they walks``), a noun's number flipped, or a word of a pair swapped
  for its partner (``was``/``were``, ``a``/``an``, ``this``/``these`` ...);
- ``loop``: a span of 2-4 words repeated two or three more times in place ("she went to the
  store to the store to the store"), the degenerate loop of greedy decoding.

``span`` is the number of words before the final punctuation. Every edit draws only from the
``rng`` it is given (the story's :class:`~training.negatives.corruptions.StoryRandom`), so a
corpus is the same for any ``num_proc``; it returns None where it cannot change the sentence.
The technique that applies them to a story is ``grammar`` in ``corruptions.TECHNIQUES``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from story_quality.training.negatives.lexicon import inflect_back_plural
from story_quality.training.negatives.morphology import inflect, verb_lemma

Words = tuple[list[str], list[str]]
Edit = Callable[[list[str], list[str], int, Any], Words | None]

# Words whose partner breaks agreement in nearly every sentence that has them.
PARTNERS = {
    "is": "are", "are": "is", "was": "were", "were": "was", "has": "have", "have": "has",
    "does": "do", "do": "does", "a": "an", "an": "a", "this": "these", "these": "this",
}  # fmt: skip
INFLECTED_VERBS = frozenset({"VBD", "VBZ", "VBG", "VBN"})
MAX_LOOP = 4


def _with_case(word: str, like: str) -> str:
    """``word`` capitalised as ``like`` is (``Went`` -> ``Go``)."""
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _is_word(token: str) -> bool:
    return any(c.isalnum() for c in token)


def drop_words(tokens: list[str], tags: list[str], span: int, rng: Any) -> Words | None:
    """Leave out m ~ U{1..max(1, span // 8)} of the sentence's words."""
    if span < 4:
        return None
    left_out = set(rng.sample(range(span), rng.between(1, max(1, span // 8))))
    kept = [i for i in range(len(tokens)) if i not in left_out]
    return [tokens[i] for i in kept], [tags[i] for i in kept]


def double_word(tokens: list[str], tags: list[str], span: int, rng: Any) -> Words | None:
    """Write one word twice in a row."""
    words = [i for i in range(span) if _is_word(tokens[i])]
    if not words:
        return None
    i = words[rng.index(len(words))]
    return tokens[: i + 1] + tokens[i:], tags[: i + 1] + tags[i:]


def swap_adjacent(tokens: list[str], tags: list[str], span: int, rng: Any) -> Words | None:
    """Exchange two adjacent different words."""
    pairs = [i for i in range(span - 1) if tokens[i] != tokens[i + 1]]
    if not pairs:
        return None
    i = pairs[rng.index(len(pairs))]
    order = [*range(i), i + 1, i, *range(i + 2, len(tokens))]
    return [tokens[j] for j in order], [tags[j] for j in order]


def broken_form(word: str, tag: str) -> tuple[str, str] | None:
    """The word with its agreement or inflection broken, and its new tag; None where no rule applies.

    >>> [broken_form(w, t) for w, t in [("went", "VBD"), ("walk", "VBP"), ("was", "VBD"), ("dogs", "NNS")]]
    [('go', 'VB'), ('walks', 'VBZ'), ('were', 'VBD'), ('dog', 'NN')]
    """
    lower = word.lower()
    if lower in PARTNERS:
        return _with_case(PARTNERS[lower], word), tag
    if tag in INFLECTED_VERBS:
        form, new_tag = verb_lemma(lower, tag), "VB"
    elif tag in ("VB", "VBP"):
        form, new_tag = inflect(lower, "VBZ"), "VBZ"
    elif tag == "NNS":
        form, new_tag = inflect_back_plural(lower), "NN"
    elif tag == "NN" and lower.isalpha():
        form, new_tag = inflect(lower, "NNS"), "NNS"
    else:
        return None
    return (_with_case(form, word), new_tag) if form != lower else None


def break_agreement(tokens: list[str], tags: list[str], span: int, rng: Any) -> Words | None:
    """Break the inflection or agreement of one word (:func:`broken_form`)."""
    broken = {i: broken_form(tokens[i], tags[i]) for i in range(span)}
    candidates = [i for i, form in broken.items() if form is not None]
    if not candidates:
        return None
    i = candidates[rng.index(len(candidates))]
    word, tag = broken[i]  # type: ignore[misc]
    return tokens[:i] + [word] + tokens[i + 1 :], tags[:i] + [tag] + tags[i + 1 :]


def loop_words(tokens: list[str], tags: list[str], span: int, rng: Any) -> Words | None:
    """Repeat a span of n ~ U{2..4} words two or three more times where it ends."""
    if span < 2:
        return None
    n = rng.between(2, min(MAX_LOOP, span))
    end = rng.between(n, span)
    times = rng.between(2, 3)
    return (
        tokens[:end] + tokens[end - n : end] * times + tokens[end:],
        tags[:end] + tags[end - n : end] * times + tags[end:],
    )


EDITS: dict[str, Edit] = {
    "drop": drop_words,
    "double": double_word,
    "swap": swap_adjacent,
    "agreement": break_agreement,
    "loop": loop_words,
}
