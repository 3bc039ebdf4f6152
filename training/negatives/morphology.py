"""Rule-based English morphology: the fallback when NLTK's WordNet is not installed.

Negation needs a verb's lemma (``went`` -> ``did not go``) and antonym substitution needs
the antonym inflected like the word it replaces (``loved`` -> ``hated``). WordNet's
``morphy`` does the first when it is available; these rules (irregular forms from
``training/negatives/data/irregular_verbs.tsv``, then suffix rules) do both everywhere else. They are
deterministic and cover regular English; odd words may come out imperfect, which a
corruption can afford.
"""

from __future__ import annotations

import functools
import pathlib

DATA_DIR = pathlib.Path(__file__).parent / "data"
VOWELS = frozenset("aeiou")
_UNDOUBLE = frozenset("bdgmnprt")


@functools.lru_cache(maxsize=1)
def irregular_verbs() -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(inflected form -> base, base -> (past, participle)) from the shipped table."""
    to_base: dict[str, str] = {}
    forms: dict[str, tuple[str, str]] = {}
    for line in (DATA_DIR / "irregular_verbs.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        base, past, participle = line.split("\t")
        forms[base] = (past.split("/")[0], participle.split("/")[0])
        for form in (*past.split("/"), *participle.split("/")):
            to_base.setdefault(form, base)
    return to_base, forms


def _one_syllable_cvc(stem: str) -> bool:
    """``hop``, ``lik``, ``smil``: a stem that lost a silent ``e`` before ``-ed``/``-ing``."""
    groups = sum(1 for i, c in enumerate(stem) if c in VOWELS and (i == 0 or stem[i - 1] not in VOWELS))
    return (
        groups == 1
        and len(stem) >= 3
        and stem[-1] not in VOWELS
        and stem[-1] not in "wxy"
        and stem[-2] in VOWELS
        and stem[-3] not in VOWELS
    )


def _restore_stem(stem: str) -> str:
    """Undo the spelling changes of ``-ed``/``-ing``: doubled consonant, dropped ``e``."""
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] in _UNDOUBLE:
        return stem[:-1]
    if stem[-1:] in ("c", "v", "z", "u") or _one_syllable_cvc(stem):
        return stem + "e"
    return stem


def verb_lemma(word: str, tag: str) -> str:
    """Base form of a verb given its Penn Treebank tag (lowercase in, lowercase out).

    >>> [verb_lemma(w, t) for w, t in [("went", "VBD"), ("walked", "VBD"), ("hoped", "VBD"),
    ...  ("stopped", "VBD"), ("tries", "VBZ"), ("watches", "VBZ"), ("cried", "VBD"), ("agreed", "VBD")]]
    ['go', 'walk', 'hope', 'stop', 'try', 'watch', 'cry', 'agree']
    """
    to_base, _ = irregular_verbs()
    if word in to_base and tag in ("VBD", "VBN"):
        return to_base[word]
    if tag == "VBZ":
        if word in ("is", "has", "does"):
            return {"is": "be", "has": "have", "does": "do"}[word]
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        if word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
            return word[:-2]
        return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    if tag in ("VBD", "VBN") and word.endswith("ed") and len(word) > 3:
        if word.endswith("ied") and len(word) > 4:
            return word[:-3] + "y"
        if word.endswith("eed"):
            return word[:-1]
        return _restore_stem(word[:-2])
    if tag == "VBG" and word.endswith("ing") and len(word) > 4:
        return _restore_stem(word[:-3])
    return word


def inflect(lemma: str, tag: str) -> str:
    """Put a base form into the inflection a Penn Treebank tag names (regular rules + irregulars).

    >>> [inflect("hate", "VBD"), inflect("go", "VBN"), inflect("cry", "VBZ"), inflect("stop", "VBG"),
    ...  inflect("box", "NNS"), inflect("lose", "VBG")]
    ['hated', 'gone', 'cries', 'stopping', 'boxes', 'losing']
    """
    _, forms = irregular_verbs()
    if tag in ("VBD", "VBN") and lemma in forms:
        return forms[lemma][0 if tag == "VBD" else 1]
    if tag in ("VBZ", "NNS"):
        if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in VOWELS:
            return lemma[:-1] + "ies"
        if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
            return lemma + "es"
        return lemma + "s"
    if tag in ("VBD", "VBN"):
        if lemma.endswith("e"):
            return lemma + "d"
        if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in VOWELS:
            return lemma[:-1] + "ied"
        return _double(lemma) + "ed"
    if tag == "VBG":
        if lemma.endswith("ie"):
            return lemma[:-2] + "ying"
        if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")):
            return lemma[:-1] + "ing"
        return _double(lemma) + "ing"
    return lemma


def _double(lemma: str) -> str:
    """``stop`` -> ``stopp`` before a vowel suffix (one-syllable consonant-vowel-consonant)."""
    if _one_syllable_cvc(lemma) and lemma[-1] in _UNDOUBLE | {"l"}:
        return lemma + lemma[-1]
    return lemma
