"""A deterministic Penn Treebank POS guesser: the fallback when NLTK's tagger is not installed.

UNION used NLTK's averaged-perceptron tagger (a download). Without it, negation and
keyword substitution still need to know which words are verbs (and which kind) and which
are content words; closed-class word lists, a few positional rules (after a modal or ``to``
comes a base verb; after ``he`` a word in ``-s`` is a present verb) and suffix rules get the
short declarative sentences of ROCStories mostly right. It is not a replacement for a real
tagger: the build summary records which one was used.
"""

from __future__ import annotations

import functools
import re

from story_quality.training.negatives.morphology import irregular_verbs
from story_quality.union.normalization import PLACEHOLDERS

CLOSED_CLASS: dict[str, str] = {
    **dict.fromkeys(
        "the a an this that these those every each some any no another all both either neither".split(),
        "DT",
    ),
    **dict.fromkeys(
        "i you he she it we they me him us them myself yourself himself herself itself ourselves "
        "themselves someone somebody something anyone anybody anything everyone everybody everything "
        "nobody nothing".split(),
        "PRP",
    ),
    **dict.fromkeys("my your his its our their".split(), "PRP$"),
    **dict.fromkeys(
        "in on at by for with about against between into through during before after above below from "
        "up down out off over under until since of near behind across along around without within "
        "toward towards upon because although though while if unless than whether like onto as".split(),
        "IN",
    ),
    **dict.fromkeys("and or but nor yet".split(), "CC"),
    **dict.fromkeys("will would can could may might shall should must wo ca sha".split(), "MD"),
    **dict.fromkeys("which".split(), "WDT"),
    **dict.fromkeys("who whom what".split(), "WP"),
    "whose": "WP$",
    **dict.fromkeys("when where why how".split(), "WRB"),
    "to": "TO",
    **dict.fromkeys(
        "not n't never very too also just then now soon still already always often sometimes really "
        "quite almost again later finally suddenly here away back even ever once so instead together "
        "rather maybe perhaps usually only well anyway yesterday today tomorrow tonight afterwards "
        "eventually immediately home".split(),
        "RB",
    ),
    "be": "VB",
    "am": "VBP",
    "are": "VBP",
    "is": "VBZ",
    "was": "VBD",
    "were": "VBD",
    "been": "VBN",
    "being": "VBG",
    "have": "VBP",
    "has": "VBZ",
    "had": "VBD",
    "having": "VBG",
    "do": "VBP",
    "does": "VBZ",
    "did": "VBD",
    "done": "VBN",
    "doing": "VBG",
}
COMMON_ADJECTIVES = frozenset(
    "good bad new old big small great little long short high low happy sad hot cold warm cool nice "
    "young hard easy late early first last best better worse worst next whole sure ready angry "
    "hungry tired excited scared afraid upset glad sick full empty beautiful pretty ugly rich poor "
    "strong weak fast slow loud quiet clean dirty dark bright right wrong free busy large huge tiny "
    "fresh favorite own other same different important real true false fine fun red blue green black "
    "white yellow brown pink orange purple gray grey lucky lonely friendly proud nervous bored "
    "alone able open safe dead alive wet dry deep heavy light sweet sour bitter kind mean funny "
    "perfect terrible horrible wonderful delicious several many much few more most less least".split()
)
NOT_ED_VERBS = frozenset(
    "need seed feed speed bleed breed weed greed shed bed red wed sled bred hundred sacred naked "
    "wicked ragged rugged beloved tired excited bored scared".split()
)
NOT_ING_VERBS = frozenset(
    "thing something nothing anything everything morning evening ring king sing bring spring string "
    "wing swing sting ceiling during building wedding pudding".split()
)
NOT_LY_ADVERBS = frozenset(
    "family only early friendly lonely ugly holy silly jelly belly rely reply supply apply fly july "
    "ally bully lily sally lovely likely daily curly chilly hilly smelly".split()
)
ADJECTIVE_SUFFIXES = ("ful", "ous", "ive", "able", "ible", "less", "ic", "ish", "ary", "y")
SUBJECT_SINGULAR = frozenset({"he", "she", "it", "someone", "somebody", "everyone", "nobody"})
SUBJECT_OTHER = frozenset({"i", "you", "we", "they"})
BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'m", "'re"})
HAVE_FORMS = frozenset({"have", "has", "had", "having", "'ve", "'d"})
DO_FORMS = frozenset({"do", "does", "did"})
_PUNCT = {".": ".", "!": ".", "?": ".", ",": ",", ";": ":", ":": ":", "--": ":", "...": ":"}
_QUOTES = {"``": "``", "''": "''", '"': "''", "'": "''"}
_NUMBER = re.compile(r"^[\d.,/:-]*\d[\d.,/:-]*$|^(one|two|three|four|five|six|seven|eight|nine|ten)$")


def _closed_or_form(word: str) -> str | None:
    if word in PLACEHOLDERS:
        return "NNP"
    if word in _PUNCT:
        return _PUNCT[word]
    if word in _QUOTES:
        return _QUOTES[word]
    if word in ("(", "[", "{"):
        return "("
    if word in (")", "]", "}"):
        return ")"
    if _NUMBER.match(word):
        return "CD"
    if not any(c.isalnum() for c in word):
        return "SYM"
    return None


@functools.lru_cache(maxsize=1)
def _irregular_forms() -> tuple[frozenset[str], frozenset[str]]:
    """(irregular past forms that are not also base forms, participles that are neither)."""
    _, forms = irregular_verbs()
    bases = frozenset(forms)
    past = frozenset(p for p, _ in forms.values()) - bases
    return past, frozenset(pp for _, pp in forms.values()) - bases - past


def heuristic_pos_tag(tokens: list[str]) -> list[str]:
    """Penn Treebank tags for one tokenised sentence, from word lists and suffix/position rules.

    >>> heuristic_pos_tag("[MALE] walked to the store and bought milk .".split())
    ['NNP', 'VBD', 'TO', 'DT', 'NN', 'CC', 'VBD', 'NN', '.']
    >>> heuristic_pos_tag("she likes to swim but i hate cold water .".split())
    ['PRP', 'VBZ', 'TO', 'VB', 'CC', 'PRP', 'VBP', 'JJ', 'NN', '.']
    """
    past_forms, participle_only = _irregular_forms()
    tags: list[str] = []
    for i, token in enumerate(tokens):
        word = token.lower()
        # the last non-adverb before this word (so "he always walks" sees "he")
        j = i - 1
        while j >= 0 and tags[j] == "RB":
            j -= 1
        prev = tokens[j].lower() if j >= 0 else ""
        prev_tag = tags[j] if j >= 0 else ""
        fixed = _closed_or_form(token)
        if fixed is None and word == "'s":
            fixed = "VBZ" if prev in SUBJECT_SINGULAR | {"that", "there", "what"} else "POS"
        if fixed is None and word == "her":
            nxt = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            fixed = (
                "PRP$"
                if nxt and _closed_or_form(tokens[i + 1]) is None and nxt not in CLOSED_CLASS
                else "PRP"
            )
        if fixed is None and word == "there":
            nxt = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            fixed = "EX" if nxt in BE_FORMS | {"'s"} else "RB"
        if fixed is None and word in CLOSED_CLASS:
            fixed = CLOSED_CLASS[word]
        if fixed is not None:
            tags.append(fixed)
            continue
        tags.append(_open_class(token, word, prev, prev_tag, i, past_forms, participle_only))
    return tags


def _open_class(
    token: str,
    word: str,
    prev: str,
    prev_tag: str,
    i: int,
    past_forms: frozenset[str],
    participle_only: frozenset[str],
) -> str:
    after_aux = prev_tag == "MD" or prev == "to" or prev in DO_FORMS
    after_have, after_be = prev in HAVE_FORMS, prev in BE_FORMS
    after_subject = prev in SUBJECT_SINGULAR | SUBJECT_OTHER or prev_tag == "NNP"
    if i > 0 and token[:1].isupper() and token[1:].islower():
        return "NNP"
    if after_aux and word not in COMMON_ADJECTIVES:
        return "VB"
    if word in participle_only:
        return "VBN"
    if word in past_forms:
        return "VBN" if after_have or after_be else "VBD"
    if word in COMMON_ADJECTIVES:
        return "JJ"
    if word.endswith("ed") and len(word) > 3 and word not in NOT_ED_VERBS:
        return "VBN" if after_have or after_be else "VBD"
    if word.endswith("ing") and len(word) > 4 and word not in NOT_ING_VERBS:
        return "NN" if prev_tag in ("DT", "PRP$", "JJ", "POS") else "VBG"
    if word.endswith("ly") and len(word) > 3 and word not in NOT_LY_ADVERBS:
        return "RB"
    if after_be or word.endswith(ADJECTIVE_SUFFIXES[:-1]):
        return "JJ"
    if after_subject:
        if prev in SUBJECT_OTHER:
            return "VBP"
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return "VBZ"
        return "VBD" if prev_tag == "NNP" else "VBP"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return "NNS"
    return "NN"
