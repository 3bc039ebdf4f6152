"""Negating one sentence by UNION's rules, keeping ROCStories tokenisation (``did n't``, ``does not``).

In order, the first rule that applies:

1. a negation word (``not``, ``n't``, ``never``, ``no``) is removed (``ca n't`` -> ``can``,
   ``wo n't`` -> ``will``);
2. else ``n't`` (after do/does/did/is/are/was/were/could/would/should) or ``not`` (after the
   other auxiliaries) is inserted after the first auxiliary;
3. else by the first verb's tag: VB/VBP ``do not`` + verb, VBZ ``does not`` + lemma,
   VBD ``did not`` + lemma, VBG/VBN ``not`` + verb;
4. else the sentence cannot be negated (None).
"""

from __future__ import annotations

from collections.abc import Callable

NEGATION_WORDS = frozenset({"not", "n't", "never", "no"})
AUXILIARIES = frozenset(
    "would will can could may might shall should do does did am is are was were be been".split()
)
CONTRACTED_AUXILIARIES = frozenset("do does did is are was were could would should".split())
_UNCONTRACT = {"ca": "can", "wo": "will", "sha": "shall"}
_VERB_OR_MODAL = ("VB", "MD")

Sentence = tuple[list[str], list[str]]


def negate(tokens: list[str], tags: list[str], lemma: Callable[[str, str], str]) -> Sentence | None:
    """(tokens, tags) of the negated sentence, or None when no rule applies.

    >>> from story_quality.training.negatives.morphology import verb_lemma
    >>> negate("he went home .".split(), ["PRP", "VBD", "RB", "."], verb_lemma)[0]
    ['he', 'did', 'not', 'go', 'home', '.']
    >>> negate("she was n't there .".split(), ["PRP", "VBD", "RB", "RB", "."], verb_lemma)[0]
    ['she', 'was', 'there', '.']
    """
    tokens, tags = list(tokens), list(tags)
    for i, token in enumerate(tokens):
        if token.lower() in NEGATION_WORDS:
            if token.lower() == "n't" and i > 0 and tokens[i - 1].lower() in _UNCONTRACT:
                tokens[i - 1] = _match_case(tokens[i - 1], _UNCONTRACT[tokens[i - 1].lower()])
            return tokens[:i] + tokens[i + 1 :], tags[:i] + tags[i + 1 :]
    for i, (token, tag) in enumerate(zip(tokens, tags, strict=True)):
        if token.lower() in AUXILIARIES and tag.startswith(_VERB_OR_MODAL):
            word = "n't" if token.lower() in CONTRACTED_AUXILIARIES else "not"
            return tokens[: i + 1] + [word] + tokens[i + 1 :], tags[: i + 1] + ["RB"] + tags[i + 1 :]
    for i, (token, tag) in enumerate(zip(tokens, tags, strict=True)):
        if not tag.startswith("VB"):
            continue
        if tag in ("VB", "VBP"):
            inserted, verb, verb_tag = ["do", "not"], token, tag
            inserted_tags = ["VBP", "RB"]
        elif tag == "VBZ":
            inserted, verb, verb_tag = ["does", "not"], lemma(token.lower(), tag), "VB"
            inserted_tags = ["VBZ", "RB"]
        elif tag == "VBD":
            inserted, verb, verb_tag = ["did", "not"], lemma(token.lower(), tag), "VB"
            inserted_tags = ["VBD", "RB"]
        else:  # VBG, VBN
            inserted, verb, verb_tag = ["not"], token, tag
            inserted_tags = ["RB"]
        if i == 0 and token[:1].isupper():  # "Went home." -> "Did not go home."
            inserted[0] = inserted[0].capitalize()
            verb = verb[:1].lower() + verb[1:]
        return (
            tokens[:i] + inserted + [verb] + tokens[i + 1 :],
            tags[:i] + inserted_tags + [verb_tag] + tags[i + 1 :],
        )
    return None


def _match_case(template: str, word: str) -> str:
    return word.capitalize() if template[:1].isupper() else word
