"""How UNION's story text is normalised: the one implementation training and scoring share.

A UNION checkpoint records, under ``config.union_normalization``, the
:class:`StoryNormalization` its training text went through; the ``union`` metric reads it
back and applies the same function, so a story is scored in the form the model saw.

Everything here is deterministic and needs no NLTK download: sentences are split by an
untrained Punkt model with a fixed abbreviation list, words by the (rule-based) Penn
Treebank tokenizer, so a corpus normalised on one machine matches a story scored on
another whatever NLTK data either has installed.

>>> roc = StoryNormalization(lowercase=True, replace_names=True, roc_tokenize=True)
>>> roc("Tom didn't go home. He stayed at Mary's house")
"[MALE] did n't go home . he stayed at [FEMALE] 's house ."
>>> ROC_STORIES("tom did n\u2019t go home . he stayed at [female] 's house .")
"[MALE] did n't go home . he stayed at [FEMALE] 's house ."
>>> roc(roc("Tom didn't go home. He stayed at Mary's house")) == roc("Tom didn't go home. He stayed at Mary's house")
True
>>> StoryNormalization()("Kept  as it is.")
'Kept  as it is.'
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import pathlib
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from nltk.tokenize import TreebankWordTokenizer
from nltk.tokenize.punkt import PunktLanguageVars, PunktParameters, PunktSentenceTokenizer, PunktToken

from story_quality.text_checks import INVISIBLE_CATEGORIES

CONFIG_KEY = "union_normalization"
NAMES_FILE = pathlib.Path(__file__).with_name("person_names.tsv")


def read_name_table(path: pathlib.Path = NAMES_FILE) -> tuple[dict[str, str], str]:
    """The first-name table (lowercase name -> MALE/FEMALE/NEUTRAL) and the sha256 of its file."""
    data = path.read_bytes()
    table = {}
    for line in data.decode("utf-8").splitlines():
        if line and not line.startswith("#"):
            name, gender = line.split("\t")
            table[name] = gender
    return table, hashlib.sha256(data).hexdigest()


NAME_GENDER, NAMES_SHA256 = read_name_table()
PLACEHOLDERS = ("[MALE]", "[FEMALE]", "[NEUTRAL]")
ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "mt", "vs", "etc", "e.g", "i.e"}
)
# Tokens a sentence may end with (closing quotes included), and the tokens that end one.
SENTENCE_END = frozenset({".", "!", "?", "''", '"', "'", "``"})
SENTENCE_STOPS = frozenset({".", "!", "?"})
# A placeholder must survive the Treebank tokenizer, which splits brackets off words.
_PROTECT = {tag: f"zzplaceholder{tag[1:-1].lower()}zz" for tag in PLACEHOLDERS}
_RESTORE = {v: k for k, v in _PROTECT.items()}
_PLACEHOLDER_RE = re.compile("|".join(re.escape(tag) for tag in PLACEHOLDERS))
_ANY_CASE_PLACEHOLDER_RE = re.compile(_PLACEHOLDER_RE.pattern, re.IGNORECASE)


_KEPT_WHITESPACE = frozenset("\n\t ")
# str.isprintable() is False for every character of these categories ("Other" and "Separator"), so
# a printable text holds no invisible character.
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
if not INVISIBLE_CATEGORIES <= _UNPRINTABLE_CATEGORIES:
    raise ImportError(f"remove_invisible's shortcut needs {sorted(INVISIBLE_CATEGORIES)} unprintable")


def remove_invisible(text: str) -> str:
    r"""Control and format characters (zero-width spaces, BOMs, lone surrogates) become spaces.

    Only what no reader sees changes; training and scoring both do it, so an invisible
    character cannot make a scored story differ from its training form.

    >>> remove_invisible("a\u200bb\x07c\nd")
    'a b c\nd'
    """
    if text.isprintable() or text.replace("\n", " ").replace("\t", " ").isprintable():
        return text  # no character of an invisible category: each is unprintable (_INVISIBLE_UNPRINTABLE)
    return "".join(
        " " if unicodedata.category(c) in INVISIBLE_CATEGORIES and c not in _KEPT_WHITESPACE else c
        for c in text
    )


# Typographic variants a reader takes for the plain character, beyond what NFKC folds
# (full-width forms, no-break and other Unicode spaces, the ellipsis are NFKC's).
_PLAIN_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4\u0060", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2212", "-"),
        **dict.fromkeys("\u2013\u2014\u2015", " - "),
    }
)


def plain_typography(text: str) -> str:
    """Curly quotes and apostrophes, Unicode spaces and dashes, full-width forms as their plain ASCII.

    >>> print(plain_typography("Tom didn\u2019t say \u201chi\u201d\u00a0today\uff0e"))
    Tom didn't say "hi" today.
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_PLAIN_PUNCTUATION)


@functools.lru_cache(maxsize=1)
def _sentence_splitter() -> PunktSentenceTokenizer:
    """An untrained Punkt model with :data:`ABBREVIATIONS`; its three per-text patterns run on ``re``
    (:func:`stdlib_pattern`), kept on this splitter's own language settings, not NLTK's classes."""
    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    splitter = PunktSentenceTokenizer(params, lang_vars=_StdlibPunktLanguage(), token_cls=_StdlibPunktToken)
    language = splitter._lang_vars
    language._re_word_tokenizer = stdlib_pattern(language._word_tokenizer_re())
    language._re_period_context = stdlib_pattern(language.period_context_re())
    return splitter


# Flags a stdlib pattern takes over from NLTK's (the ``regex`` engine shares their values).
_PORTABLE_FLAGS = int(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.UNICODE)


def stdlib_pattern(pattern: Any) -> re.Pattern:
    """One of NLTK's own fixed patterns compiled by the standard ``re`` engine.

    NLTK routes every pattern through ``nltk.redos``: the ``regex`` engine under a timeout, a
    guard against caller-supplied patterns that made the Treebank tokenizer the slowest step of
    scoring. Its built-in patterns are fixed and linear, and ``re`` is the engine they were
    written for, so they are compiled with it. Tests compare the result with NLTK's own.
    """
    if int(pattern.flags) & ~_PORTABLE_FLAGS & ~0x2000:  # 0x2000: regex's VERSION0, re's own behaviour
        raise ValueError(f"NLTK pattern {pattern.pattern!r} has flags re does not take: {pattern.flags:#x}")
    return re.compile(pattern.pattern, pattern.flags & _PORTABLE_FLAGS)


def _stdlib_rules(rules: Any) -> Any:
    """A Treebank rule (a pattern, a (pattern, replacement) pair, or a list of them) with stdlib patterns."""
    if isinstance(rules, list):
        return [_stdlib_rules(rule) for rule in rules]
    if isinstance(rules, tuple):
        return (stdlib_pattern(rules[0]), *rules[1:])
    return stdlib_pattern(rules)


class _StdlibPunktLanguage(PunktLanguageVars):
    """NLTK's Punkt language settings, the boundary realignment pattern compiled by ``re``."""

    __slots__ = ()
    re_boundary_realignment = stdlib_pattern(PunktLanguageVars.re_boundary_realignment)


class _StdlibPunktToken(PunktToken):
    """NLTK's Punkt token, its four per-token patterns compiled by ``re`` (:func:`stdlib_pattern`):
    a subclass, so NLTK's own class is left as it is."""

    _RE_ELLIPSIS = stdlib_pattern(PunktToken._RE_ELLIPSIS)
    _RE_NUMERIC = stdlib_pattern(PunktToken._RE_NUMERIC)
    _RE_INITIAL = stdlib_pattern(PunktToken._RE_INITIAL)
    _RE_ALPHA = stdlib_pattern(PunktToken._RE_ALPHA)


# The rule tables TreebankWordTokenizer.tokenize reads from ``self``.
_TREEBANK_RULES = (
    "STARTING_QUOTES", "PUNCTUATION", "PARENS_BRACKETS", "CONVERT_PARENTHESES", "DOUBLE_DASHES",
    "ENDING_QUOTES", "CONTRACTIONS2", "CONTRACTIONS3",
)  # fmt: skip


@functools.lru_cache(maxsize=1)
def _word_tokenizer() -> TreebankWordTokenizer:
    """NLTK's Treebank tokenizer, its rules compiled by ``re`` (:func:`stdlib_pattern`)."""
    tokenizer = TreebankWordTokenizer()
    for name in _TREEBANK_RULES:
        setattr(tokenizer, name, _stdlib_rules(getattr(tokenizer, name)))
    return tokenizer


# For each Treebank rule's pattern, strings one of which every match of it holds: a rule none of
# whose strings is in the text cannot change it, and is skipped (the same words, fewer scans).
_TREEBANK_NEEDLES: dict[str, tuple[str, ...]] = {
    r"^\"": ('"',),
    r"(``)": ("``",),
    r"([ \(\[{<])(\"|\'{2})": ('"', "''"),
    r"([:,])([^\d])": (":", ","),
    r"([:,])$": (":", ","),
    r"\.\.\.": ("...",),
    r"[;@#$%&]": tuple(";@#$%&"),
    r'([^\.])(\.)([\]\)}>"\']*)\s*$': (".",),
    r"[?!]": ("?", "!"),
    r"([^'])' ": ("' ",),
    r"[\]\[\(\)\{\}\<\>]": tuple("[](){}<>"),
    r"--": ("--",),
    r"''": ("''",),
    r'"': ('"',),
    r"([^' ])('[sS]|'[mM]|'[dD]|') ": ("'",),
    r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": ("'",),
}
# Every contraction rule (CONTRACTIONS2 and 3, case-insensitive) matches one of these words, read
# with the same flag: without one, they are all skipped.
_CONTRACTION_LITERALS = (
    "cannot",
    "d'ye",
    "gimme",
    "gonna",
    "gotta",
    "lemme",
    "more'n",
    "wanna",
    "'tis",
    "'twas",
)
_CONTRACTION_WORDS = re.compile("|".join(map(re.escape, _CONTRACTION_LITERALS)), re.IGNORECASE)


# A Treebank rule: its pattern, its replacement, and whether a text holds one of its needles.
_Step = tuple[re.Pattern, str, Callable[[str], bool]]


@functools.lru_cache(maxsize=1)
def _treebank_steps() -> tuple[list[_Step], list[_Step], list[re.Pattern]]:
    """The Treebank tokenizer's rules in its order, each with the test of its needles: those before
    the text is padded with spaces, those after, and the contraction patterns."""
    tokenizer = _word_tokenizer()

    def with_needles(rules: list[tuple[re.Pattern, str]]) -> list[_Step]:
        missing = [regexp.pattern for regexp, _ in rules if regexp.pattern not in _TREEBANK_NEEDLES]
        if missing:
            raise RuntimeError(f"NLTK's Treebank tokenizer has rules this version does not know: {missing}")
        return [
            (regexp, substitution, _holds_one(_TREEBANK_NEEDLES[regexp.pattern]))
            for regexp, substitution in rules
        ]

    before = [
        *tokenizer.STARTING_QUOTES,
        *tokenizer.PUNCTUATION,
        tokenizer.PARENS_BRACKETS,
        tokenizer.DOUBLE_DASHES,
    ]
    return (
        with_needles(before),
        with_needles(tokenizer.ENDING_QUOTES),
        [*tokenizer.CONTRACTIONS2, *tokenizer.CONTRACTIONS3],
    )


def _holds_one(needles: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a text holds one of ``needles``: ``in`` for one, a set of characters for single
    characters, each in turn otherwise."""
    if len(needles) == 1:
        needle = needles[0]
        return lambda text: needle in text
    if all(len(needle) == 1 for needle in needles):
        characters = frozenset(needles)
        return lambda text: not characters.isdisjoint(text)
    return lambda text: any(needle in text for needle in needles)


def _may_hold_contraction(text: str) -> bool:
    """Whether ``text`` holds one of the contraction words in any case: for ASCII text its lower case
    holds one (re's case-insensitive matching of ASCII letters, there), else the search itself."""
    if text.isascii():
        lowered = text.lower()
        return any(word in lowered for word in _CONTRACTION_LITERALS)
    return _CONTRACTION_WORDS.search(text) is not None


def treebank_words(text: str) -> list[str]:
    """``TreebankWordTokenizer().tokenize(text)``, skipping each rule that cannot match (tests compare
    the two on generated text).

    >>> treebank_words('He said "I cannot" -- then (gonna) left...')
    ['He', 'said', '``', 'I', 'can', 'not', "''", '--', 'then', '(', 'gon', 'na', ')', 'left', '...']
    """
    before, after, contractions = _treebank_steps()
    for regexp, substitution, may_match in before:
        if may_match(text):
            text = regexp.sub(substitution, text)
    text = " " + text + " "
    for regexp, substitution, may_match in after:
        if may_match(text):
            text = regexp.sub(substitution, text)
    if _may_hold_contraction(text):
        for regexp in contractions:
            text = regexp.sub(r" \1 \2 ", text)
    return text.split()


def split_sentences(text: str) -> list[str]:
    """Split a story into sentences (deterministic, no NLTK data needed); blank pieces are dropped.

    >>> split_sentences("Mr. Smith went home. He slept!  Then  ")
    ['Mr. Smith went home.', 'He slept!', 'Then']
    """
    return [s.strip() for line in text.splitlines() for s in _sentence_splitter().tokenize(line) if s.strip()]


def tokenize_sentence(sentence: str, any_case_placeholders: bool = False) -> list[str]:
    """ROCStories-style words of one sentence (``did n't``, ``'s``, punctuation apart), placeholders kept whole.

    >>> tokenize_sentence("[MALE] didn't like it")
    ['[MALE]', 'did', "n't", 'like', 'it']
    >>> tokenize_sentence("[male] ran", any_case_placeholders=True)
    ['[MALE]', 'ran']
    """
    if "[" not in sentence:  # every placeholder starts with one
        return treebank_words(sentence)
    pattern = _ANY_CASE_PLACEHOLDER_RE if any_case_placeholders else _PLACEHOLDER_RE
    protected = pattern.sub(lambda m: f" {_PROTECT[m.group(0).upper()]} ", sentence)
    return [_RESTORE.get(tok, tok) for tok in treebank_words(protected)]


# Where UNION's own (unpublished) name tagger differs from the census lists, read off the
# stories its release holds both raw and normalised (``benchmarks.union_normalization_pairs``):
# it tags some capitalised function words ("So", "My", "May", "Will"), weekdays and nicknames,
# leaves "Ken" and some rare names alone, and calls more names neutral. A model is scored on
# text tagged this way (the annotated stories were), so its training text is tagged the same.
# None: not a name for UNION.
UNION_TAGGER_DIFFERENCES: dict[str, str | None] = {
    **dict.fromkeys(("ken", "shara", "kacy", "luisa", "jame"), None),
    **dict.fromkeys(("so", "sam", "alex", "riley", "lauren", "joey", "carol", "sage"), "NEUTRAL"),
    **dict.fromkeys(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"), "NEUTRAL"
    ),
    **dict.fromkeys(
        ("mike", "aiden", "tony", "ed", "dean", "randy", "will", "diesel", "ari", "adrian"), "MALE"
    ),
    **dict.fromkeys(("my", "may", "kitty", "heather", "meg", "maria"), "FEMALE"),
}


# Census first names that are ordinary words too when written in lower case ("pay the bill",
# "in june"): in a lowercased story they stay words. The corpus-derived part is every name that
# raw ROCStories text writes in lower case in at least 5 % of its uses.
LOWERCASE_AMBIGUOUS_NAMES = frozenset(
    {
        *("bill", "don", "mark", "teddy", "ray", "rob", "jack", "sue", "pat", "frank", "jean", "mac"),
        *("nana", "alfredo", "barbie", "kitty", "so", "my", "may", "will"),
    }
)


def lowercase_name_tag(token: str) -> str | None:
    """The placeholder of a first name in a story that arrived lowercased, else None.

    The census list and UNION's tagger differences decide as they do for a capitalised token
    (raw text capitalises weekdays and months, so those are tagged here too), less the names
    that are ordinary lower-case words.

    >>> lowercase_name_tag("kelly"), lowercase_name_tag("bill"), lowercase_name_tag("ken")
    ('[NEUTRAL]', None, None)
    """
    if not token.islower() or token in LOWERCASE_AMBIGUOUS_NAMES:
        return None
    return name_tag(token.capitalize())


def arrived_lowercased(text: str) -> bool:
    """True when no letter of ``text`` is upper case, placeholders aside: its names cannot be seen by capitals.

    >>> arrived_lowercased("[MALE] and kelly went home ."), arrived_lowercased("Kelly went home.")
    (True, False)
    """
    return not any(c.isupper() for c in _ANY_CASE_PLACEHOLDER_RE.sub(" ", text))


def name_tag(token: str) -> str | None:
    """``[MALE]``/``[FEMALE]``/``[NEUTRAL]`` for a capitalised first name, else None.

    Only capitalised tokens count ("Rose" the person, not "rose" the flower); names that are
    also common English words are not on the census list (see ``person_names.tsv``), except
    where UNION's tagger tagged them (``UNION_TAGGER_DIFFERENCES``).

    >>> name_tag("Kelly"), name_tag("Ken"), name_tag("So"), name_tag("so")
    ('[NEUTRAL]', None, '[NEUTRAL]', None)
    """
    if not token[:1].isupper() or not token[1:].islower() and not token.isupper():
        return None
    lower = token.lower()
    gender = UNION_TAGGER_DIFFERENCES[lower] if lower in UNION_TAGGER_DIFFERENCES else NAME_GENDER.get(lower)
    return f"[{gender}]" if gender else None


@dataclasses.dataclass(frozen=True)
class StoryNormalization:
    """The text normalisation of a UNION checkpoint's training data.

    ``roc_tokenize``: sentence split, Penn Treebank words joined by single spaces, and a
    ``.`` after a sentence that ends in a letter or digit. ``replace_names``: capitalised
    first names become ``[MALE]``/``[FEMALE]``/``[NEUTRAL]``. ``lowercase``: everything but
    those placeholders is lowercased. ``plain_typography``: curly quotes, Unicode spaces and
    dashes, full-width forms first become their plain characters. ``lowercase_names`` (with
    ``replace_names``): a story that arrived lowercased has its census first names tagged too,
    and ``[male]`` read as ``[MALE]``, so a story normalises alike raw, lowercased or masked.
    All off: the text is returned unchanged. Checkpoints trained before the last two existed
    record neither and keep their exact scores.
    """

    lowercase: bool = False
    replace_names: bool = False
    roc_tokenize: bool = False
    plain_typography: bool = False
    lowercase_names: bool = False
    # sha256 of the name table the text was tagged with (None: not recorded, checkpoints before it)
    names_sha256: str | None = None

    @property
    def is_identity(self) -> bool:
        return not (
            self.lowercase
            or self.replace_names
            or self.roc_tokenize
            or self.plain_typography
            or self.lowercase_names
        )

    def to_dict(self) -> dict[str, bool | str]:
        record = dataclasses.asdict(self)
        if record["names_sha256"] is None:
            del record["names_sha256"]
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any] | None) -> StoryNormalization:
        """Read a checkpoint's record; None (no record) means the identity."""
        if record is None:
            return cls()
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(record) - known
        if unknown:
            raise ValueError(
                f"Unknown text normalisation option(s) {sorted(unknown)} in the checkpoint's "
                f"'{CONFIG_KEY}'; this version understands {sorted(known)}. Upgrade the metric."
            )
        options = {k: (v if k == "names_sha256" else bool(v)) for k, v in record.items()}
        recorded = options.get("names_sha256")
        if recorded is not None and options.get("replace_names") and recorded != NAMES_SHA256:
            raise ValueError(
                f"The checkpoint's text was tagged with the name table sha256 {recorded[:12]}..., this version "
                f"has {NAMES_SHA256[:12]}... (story_quality/union/person_names.tsv): names would be tagged "
                "differently and scores would not match. Install the story-quality-metrics version it was "
                "trained with."
            )
        return cls(**options)

    @classmethod
    def from_config(cls, config: Any) -> StoryNormalization:
        """The normalisation a ``PretrainedConfig`` records (identity when it records none)."""
        return cls.from_dict(getattr(config, CONFIG_KEY, None))

    def sentences(self, text: str) -> list[str]:
        """The story as normalised sentences (the unit the negative sampler works on)."""
        text = remove_invisible(text)
        if self.plain_typography:
            text = plain_typography(text)
        lowered = self.replace_names and self.lowercase_names and arrived_lowercased(text)
        if not self.roc_tokenize:
            pieces = split_sentences(text)
            return (
                [self._words(s.split(" "), lowered) for s in pieces]
                if (self.lowercase or self.replace_names)
                else pieces
            )
        out = []
        for sentence in split_sentences(text):
            tokens = tokenize_sentence(sentence, any_case_placeholders=self.lowercase_names)
            if tokens and tokens[-1] not in SENTENCE_END and tokens[-1][-1:].isalnum():
                tokens.append(".")
            if tokens:
                out.append(self._words(tokens, lowered))
        return out

    def _words(self, tokens: list[str], lowered: bool = False) -> str:
        if lowered:
            tokens = [(lowercase_name_tag(tok) or tok) if tok.islower() else tok for tok in tokens]
        elif self.replace_names:  # name_tag tags capitalised tokens only
            tokens = [(name_tag(tok) or tok) if tok[:1].isupper() else tok for tok in tokens]
        if self.lowercase:
            tokens = [tok if tok in PLACEHOLDERS else tok.lower() for tok in tokens]
        return " ".join(tokens)

    def __call__(self, text: str) -> str:
        if self.is_identity:
            return text
        return " ".join(self.sentences(text))


ROC_STORIES = StoryNormalization(
    lowercase=True,
    replace_names=True,
    roc_tokenize=True,
    plain_typography=True,
    lowercase_names=True,
    names_sha256=NAMES_SHA256,
)
WRITING_PROMPTS = StoryNormalization(
    lowercase=False, replace_names=False, roc_tokenize=True, plain_typography=True
)
# The recipes by name, as the training scripts' --normalization options and the model cards say them.
NAMED_NORMALIZATIONS: dict[str, StoryNormalization] = {"roc": ROC_STORIES, "wp": WRITING_PROMPTS}
