"""UNION's text normalisation: one story in any typography or casing gives one text; old records keep theirs."""

from __future__ import annotations

import hashlib

import pytest

from story_quality.union.normalization import (
    NAMES_FILE,
    NAMES_SHA256,
    ROC_STORIES,
    WRITING_PROMPTS,
    StoryNormalization,
    plain_typography,
    read_name_table,
)

RAW = "Kelly wanted a dog. She didn't ask her mom. Kelly went to the shelter with Tom."
RECORDED_BEFORE = {"lowercase": True, "replace_names": True, "roc_tokenize": True}


def test_a_story_normalises_alike_raw_lowercased_and_masked():
    expected = (
        "[NEUTRAL] wanted a dog . she did n't ask her mom . [NEUTRAL] went to the shelter with [MALE] ."
    )
    lowercased = "kelly wanted a dog . she did n't ask her mom . kelly went to the shelter with tom ."
    masked = "[NEUTRAL] wanted a dog . she did n't ask her mom . [NEUTRAL] went to the shelter with [MALE] ."
    masked_lowercased = masked.lower()
    for form in (RAW, lowercased, masked, masked_lowercased):
        assert ROC_STORIES(form) == expected, form


def test_names_that_are_lowercase_words_stay_words_in_lowercased_text():
    assert (
        ROC_STORIES("he had to pay the bill . so may will wait .")
        == "he had to pay the bill . so may will wait ."
    )
    assert ROC_STORIES("Bill paid.") == "[MALE] paid ."


def test_lowercase_names_only_where_the_story_arrived_lowercased():
    # "rose" is not a name; a capitalised story's lower-case words are never tagged
    assert ROC_STORIES("Jane saw that kelly was there.") == "[FEMALE] saw that kelly was there ."


@pytest.mark.parametrize(
    "variant",
    [
        "Kelly wanted a dog. She didn\u2019t ask her mom. Kelly went to the shelter with Tom.",
        "Kelly wanted a dog.\u00a0She didn't ask her mom. Kelly went to the shelter with Tom.",
        "Kelly wanted a dog\uff0e She didn't ask her mom\uff0e Kelly went to the shelter with Tom\uff0e",
        "Kelly\u2009wanted a dog. She didn\uff07t ask her mom. Kelly went to the shelter with Tom.",
        "Kelly wanted a dog. She didn\u2032t ask her mom.\u3000Kelly went to the shelter with Tom.",
    ],
)
def test_typographic_variants_normalise_as_plain_text(variant):
    assert ROC_STORIES(variant) == ROC_STORIES(RAW)
    assert WRITING_PROMPTS(variant) == WRITING_PROMPTS(RAW)


def test_curly_double_quotes_and_dashes_become_plain():
    assert plain_typography("\u201cNo\u201d \u2014 she said") == '"No"  -  she said'


def test_a_checkpoint_recorded_before_the_new_options_keeps_its_exact_text():
    old = StoryNormalization.from_dict(RECORDED_BEFORE)
    assert not old.plain_typography and not old.lowercase_names
    assert old("kelly went home with Tom") == "kelly went home with [MALE] ."
    assert old("She didn\u2019t go.") == "she didn\u2019t go ."
    assert ROC_STORIES.to_dict() == {
        **RECORDED_BEFORE,
        "plain_typography": True,
        "lowercase_names": True,
        "names_sha256": NAMES_SHA256,
    }


def test_a_checkpoint_tagged_with_another_name_table_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"name table sha256 000000000000\.\.\., this version has"):
        StoryNormalization.from_dict({**ROC_STORIES.to_dict(), "names_sha256": "0" * 64})
    assert StoryNormalization.from_dict(ROC_STORIES.to_dict()) == ROC_STORIES


def test_the_name_table_is_read_once_from_package_data():
    table, sha = read_name_table()
    assert table["kelly"] == "NEUTRAL" and table["tom"] == "MALE" and sha == NAMES_SHA256
    assert hashlib.sha256(NAMES_FILE.read_bytes()).hexdigest() == NAMES_SHA256


def test_normalisation_is_idempotent_on_mixed_text():
    for text in (RAW, RAW.lower(), "Hi, said Kelly\u2026 then she left"):
        once = ROC_STORIES(text)
        assert ROC_STORIES(once) == once


TREEBANK_CASES = [
    "Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.",
    "\"I can't,\" she said -- 'we won't go'... [MALE] gonna wanna lemme do it?!",
    "He said ``hi'' and left; it's 5:30 (or [so]) {maybe} <now> & then... cannot, d'ye, 'tis, 'twas.",
    "Tom's dog--the big one--ran off; Mary\u2019s cat didn\u2019t! \u201cWell,\u201d she said, \u00abfine\u00bb.",
    "caf\u00e9 na\u00efve \u4ed6\u53bb\u4e86 \u0416\u0443\u043a. Don't YOU DARE!!! 'Quoted' \"twice\" ''odd'' `tick`",
]


@pytest.mark.parametrize("text", TREEBANK_CASES)
def test_the_stdlib_treebank_tokenizer_is_nltks_own(text):
    from nltk.tokenize import TreebankWordTokenizer

    from story_quality.union.normalization import _word_tokenizer

    nltk_own = TreebankWordTokenizer()
    assert _word_tokenizer().tokenize(text) == nltk_own.tokenize(text)
    assert _word_tokenizer().tokenize(text, convert_parentheses=True) == nltk_own.tokenize(
        text, convert_parentheses=True
    )


def test_a_pattern_with_flags_re_lacks_is_refused():
    import regex

    from story_quality.union.normalization import stdlib_pattern

    assert stdlib_pattern(regex.compile(r"a+", regex.IGNORECASE)).match("AA").group(0) == "AA"
    with pytest.raises(ValueError, match="flags re does not take"):
        stdlib_pattern(regex.compile(r"a+", regex.BESTMATCH))


@pytest.mark.parametrize("text", TREEBANK_CASES)
def test_the_stdlib_sentence_splitter_is_nltks_own(text):
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    from story_quality.union.normalization import ABBREVIATIONS, _sentence_splitter

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    nltk_own = PunktSentenceTokenizer(params)
    text += " Mr. Smith met Dr. Who at 5 p.m. on Jan. 3. He left... Then?! 'Yes.' (No.) Done"
    assert _sentence_splitter().tokenize(text) == nltk_own.tokenize(text)
    assert type(nltk_own._lang_vars._word_tokenizer_re()).__name__ == "TimedPattern"  # NLTK's untouched


def generated_texts(count: int, seed: int = 0) -> list[str]:
    """Strings rich in what the Treebank and Punkt rules look at: quotes, brackets, colons and
    commas, dots, contractions in any case (dotless i and the Kelvin sign too), digits, newlines."""
    import random

    rng = random.Random(seed)
    pieces = [*"abcdnotgimewaylvrsSMDLT  '\"`:,.;@#$%&?!()[]{}<>-\t\n0123456789\u0130\u0131\u212a\u00e9"]
    pieces += [
        "cannot",
        "d'ye",
        "gonna",
        "'tis",
        "'twas",
        "wanna ",
        "n't",
        "''",
        "...",
        "--",
        "``",
        "G\u0131MME",
    ]
    pieces += [
        "Gotta",
        "LEMME",
        "more'n",
        " Mr. ",
        " Dr. ",
        " p.m. ",
        " 3. ",
        " J. ",
        "[MALE]",
        "[male]",
        " 's",
    ]
    return ["".join(rng.choices(pieces, k=rng.randint(0, 40))) for _ in range(count)]


def test_treebank_words_are_nltks_own_tokens():
    """Skipping the rules that cannot match changes no token (NLTK's own tokenizer: the reference)."""
    from nltk.tokenize import TreebankWordTokenizer

    from story_quality.union.normalization import treebank_words

    nltk_own = TreebankWordTokenizer()
    for text in TREEBANK_CASES + generated_texts(4000):
        assert treebank_words(text) == nltk_own.tokenize(text), repr(text)


def test_every_treebank_rule_runs_where_its_text_is():
    """Each rule's needles are a real test: every rule changes some generated text."""
    from story_quality.union.normalization import _treebank_steps

    before, after, contractions = _treebank_steps()
    texts = generated_texts(4000)
    for regexp, substitution, may_match in before + after:
        changed = [text for text in texts if regexp.sub(substitution, text) != text]
        assert changed and all(may_match(text) for text in changed), regexp.pattern
    assert len(contractions) == 10


@pytest.mark.parametrize("seed", range(4))
def test_the_sentence_splitter_is_nltks_own_on_generated_text(seed):
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    from story_quality.union.normalization import ABBREVIATIONS, _sentence_splitter

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    nltk_own = PunktSentenceTokenizer(params)
    for text in generated_texts(500, seed):
        assert _sentence_splitter().tokenize(text) == nltk_own.tokenize(text)


def test_remove_invisible_is_the_per_character_rule():
    import random
    import unicodedata

    from story_quality.text_checks import INVISIBLE_CATEGORIES
    from story_quality.union.normalization import remove_invisible

    rng = random.Random(3)
    alphabet = "ab \n\t\u00e9\u00a0\u2028\u200b\ufeff\x07\x00\u4e2d\u0301\U0001f600"
    for _ in range(3000):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 12)))
        slow = "".join(
            " " if unicodedata.category(c) in INVISIBLE_CATEGORIES and c not in "\n\t " else c for c in text
        )
        assert remove_invisible(text) == slow, repr(text)


def test_the_old_module_name_still_imports_with_a_warning():
    import importlib
    import sys

    from story_quality.union import normalization

    sys.modules.pop("story_quality.union.text", None)
    with pytest.warns(
        FutureWarning, match="story_quality.union.text is now story_quality.union.normalization"
    ):
        old = importlib.import_module("story_quality.union.text")
    assert old.StoryNormalization is normalization.StoryNormalization
    assert old.ROC_STORIES is normalization.ROC_STORIES
