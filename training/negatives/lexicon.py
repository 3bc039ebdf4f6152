"""Word knowledge the corruptions need: POS tags, lemmas, keywords and antonyms.

One picklable object, resolved once in the main process (which tagger, which WordNet) so
every ``datasets.map`` worker makes the same choices; heavy readers load lazily per process.
Sources, best first: NLTK's perceptron tagger and WordNet; Debian's ``wordnet-base``; an
optional ConceptNet assertions file (UNION's own source of keywords and antonyms); the
rule-based fallbacks of :mod:`training.pos_heuristic` and :mod:`training.morphology`.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import os
from collections.abc import Iterable, Mapping
from typing import Any

from datasets.fingerprint import Hasher

from story_quality.training.negatives import nltk_resources
from story_quality.training.negatives.morphology import inflect, irregular_verbs, verb_lemma
from story_quality.training.negatives.pos_heuristic import heuristic_pos_tag
from story_quality.union.normalization import PLACEHOLDERS

CONTENT_TAGS = frozenset(
    {"NN", "NNS", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "JJ", "JJR", "JJS", "RB", "RBR", "RBS"}
)
# Content-tagged words that carry grammar rather than story content: never keywords.
FUNCTION_WORDS = frozenset(
    "be am is are was were been being have has had having do does did done doing will would can could "
    "may might shall should must not n't never no so then too very also just there here now when how "
    "why where as even ever only again still yet well back up down out off away get got 's 're 'm "
    "'ve 'd 'll".split()
)
CONCEPTNET_RELATIONS = ("/r/Antonym", "/r/NotDesires", "/r/NotCapableOf", "/r/NotHasProperty")
_WORDNET_POS = {"N": "n", "V": "v", "J": "a", "R": "r"}
_INFLECTED = frozenset({"VBD", "VBN", "VBZ", "VBG", "NNS"})


def _english_word(concept: str) -> str | None:
    """``/c/en/happy/a`` -> ``happy``; multi-word or non-English concepts -> None."""
    parts = concept.split("/")
    if len(parts) < 4 or parts[2] != "en" or "_" in parts[3]:
        return None
    return parts[3]


def load_conceptnet(path: str | os.PathLike) -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    """(antonyms, vocabulary) from a ConceptNet 5 assertions file (tab-separated, optionally .gz).

    ``/r/Antonym`` edges between single English words give antonyms (both directions); every
    English word on an edge of UNION's four relations (Antonym, NotDesires, NotCapableOf,
    NotHasProperty) is a keyword candidate.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ConceptNet assertions file not found: {path}")
    opener = gzip.open if str(path).endswith(".gz") else open
    antonyms: dict[str, set[str]] = {}
    vocabulary: set[str] = set()
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for line_number, row in enumerate(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if len(row) < 4:
                raise ValueError(
                    f"{path}:{line_number}: not a ConceptNet assertion (need >= 4 tab-separated fields)"
                )
            if row[1] not in CONCEPTNET_RELATIONS:
                continue
            start, end = _english_word(row[2]), _english_word(row[3])
            vocabulary.update(w for w in (start, end) if w)
            if row[1] == "/r/Antonym" and start and end and start != end:
                antonyms.setdefault(start, set()).add(end)
                antonyms.setdefault(end, set()).add(start)
    return {k: tuple(sorted(v)) for k, v in antonyms.items()}, frozenset(vocabulary)


@dataclasses.dataclass
class Lexicon:
    """POS tagging, lemmas, keywords and antonyms with a documented fallback for each.

    ``tagger``: ``auto`` (NLTK's perceptron tagger if installed, else the heuristic), ``nltk``
    or ``heuristic``. ``wordnet``: ``auto``, ``nltk``, ``debian`` or ``none``. ``conceptnet``:
    path of an assertions file. ``antonyms``: extra antonym lists (word -> antonyms), e.g. a
    project's own list; they come before WordNet's.
    """

    tagger: str = "auto"
    wordnet: str = "auto"
    conceptnet: str | None = None
    antonyms: Mapping[str, Iterable[str]] | None = None
    debian_wordnet_dir: str = nltk_resources.DEBIAN_WORDNET_DIR
    _resolved: dict[str, Any] | None = dataclasses.field(default=None, repr=False)
    _cache: dict[tuple[str, str], tuple[str, ...]] = dataclasses.field(default_factory=dict, repr=False)

    def resolve(self) -> Lexicon:
        """Decide (once, in this process) which resources are used; idempotent; returns self."""
        if self._resolved is not None:
            return self
        if self.tagger not in ("auto", "nltk", "heuristic"):
            raise ValueError(f"tagger must be auto, nltk or heuristic; got {self.tagger!r}")
        tagger = "heuristic"
        if self.tagger != "heuristic":
            if nltk_resources.perceptron_tagger() is not None:
                tagger = "nltk-perceptron"
            elif self.tagger == "nltk":
                raise LookupError(
                    "NLTK's POS tagger is not installed: nltk.download('averaged_perceptron_tagger_eng')"
                )
        _, wordnet = nltk_resources.find_wordnet(self.wordnet, self.debian_wordnet_dir)
        extra = {k.lower(): tuple(v) for k, v in (self.antonyms or {}).items()}
        vocabulary: frozenset[str] | None = None
        if self.conceptnet:
            concept_antonyms, vocabulary = load_conceptnet(self.conceptnet)
            for word, others in concept_antonyms.items():
                extra[word] = tuple(dict.fromkeys((*extra.get(word, ()), *others)))
        self._resolved = {"tagger": tagger, "wordnet": wordnet, "antonyms": extra, "vocabulary": vocabulary}
        return self

    @property
    def state(self) -> dict[str, Any]:
        return self.resolve()._resolved  # type: ignore[return-value]

    def describe(self) -> dict[str, Any]:
        """What was used, for the build summary (a corpus depends on it)."""
        state = self.state
        return {
            "pos_tagger": state["tagger"],
            "wordnet": state["wordnet"],
            "conceptnet": os.path.basename(self.conceptnet) if self.conceptnet else None,
            "extra_antonyms": len(self.antonyms or {}),
        }

    def fingerprint(self) -> str:
        """A stable hash of everything that changes tags, keywords or antonyms (for ``datasets`` caching)."""
        state = self.state
        vocabulary = sorted(state["vocabulary"]) if state["vocabulary"] is not None else None
        return Hasher.hash(
            [self.describe(), sorted(state["antonyms"].items()), vocabulary, self.debian_wordnet_dir]
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def _wordnet_reader(self) -> Any | None:
        source = self.state["wordnet"]
        if source == "nltk":
            return nltk_resources.nltk_wordnet()
        if source == "debian":
            return nltk_resources.debian_wordnet(str(self.debian_wordnet_dir))
        return None

    def tag(self, tokens: list[str]) -> list[str]:
        """Penn Treebank tags of one tokenised sentence; name placeholders are always NNP."""
        if not tokens:
            return []
        if self.state["tagger"] == "nltk-perceptron":
            tags = [tag for _, tag in nltk_resources.perceptron_tagger().tag(tokens)]
            return ["NNP" if tok in PLACEHOLDERS else tag for tok, tag in zip(tokens, tags, strict=True)]
        return heuristic_pos_tag(tokens)

    def lemma(self, word: str, tag: str) -> str:
        """Base form (lowercase) of a word with Penn Treebank ``tag``.

        Irregular past forms come from the shipped table first: WordNet's ``morphy`` would
        keep ``felt``/``found``/``saw`` as they are (they are verbs too), giving "did not felt".
        """
        lower = word.lower()
        if tag not in _INFLECTED:
            return lower
        if tag in ("VBD", "VBN") and lower in irregular_verbs()[0]:
            return irregular_verbs()[0][lower]
        reader = self._wordnet_reader()
        if reader is not None:
            found = reader.morphy(lower, _WORDNET_POS[tag[:1]])
            if found and found != lower:
                return found
        return verb_lemma(lower, tag) if tag.startswith("VB") else inflect_back_plural(lower)

    def is_keyword(self, word: str, tag: str) -> bool:
        """A content word (noun, verb, adjective, adverb by POS) that is not grammar."""
        if tag not in CONTENT_TAGS or not word.isalpha() or len(word) < 2:
            return False
        lower = word.lower()
        if lower in FUNCTION_WORDS:
            return False
        vocabulary = self.state["vocabulary"]
        return vocabulary is None or lower in vocabulary or self.lemma(word, tag) in vocabulary

    def antonyms_of(self, word: str, tag: str) -> tuple[str, ...]:
        """Antonyms inflected like ``word`` (sorted, deterministic); empty when none is known."""
        key = (word.lower(), tag)
        if key not in self._cache:
            self._cache[key] = self._find_antonyms(*key)
        return self._cache[key]

    def _find_antonyms(self, lower: str, tag: str) -> tuple[str, ...]:
        base = self.lemma(lower, tag)
        found: list[str] = [*self.state["antonyms"].get(base, ()), *self.state["antonyms"].get(lower, ())]
        reader = self._wordnet_reader()
        pos = _WORDNET_POS.get(tag[:1])
        if reader is not None and pos is not None:
            wordnet_found = set()
            for synset in reader.synsets(base, pos):
                for lemma in synset.lemmas():
                    if lemma.name().lower() == base:
                        wordnet_found.update(a.name().lower() for a in lemma.antonyms())
            found.extend(sorted(wordnet_found))
        out = []
        for antonym in dict.fromkeys(found):
            if "_" in antonym or " " in antonym or not antonym.isalpha():
                continue
            form = inflect(antonym, tag) if tag in _INFLECTED and base != lower else antonym
            if form != lower:
                out.append(form)
        return tuple(out)


def inflect_back_plural(word: str) -> str:
    """``boxes`` -> ``box``, ``cities`` -> ``city``, ``cats`` -> ``cat`` (rule-based)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
