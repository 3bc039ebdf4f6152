"""``Lexicon``'s WordNet branch on real WordNet 3.0 data: antonyms, their inflection, word substitution.

``tests/training/negatives/fixtures/wordnet`` holds six synsets of WordNet 3.0 in the database's own format (three
antonym pairs, rebuilt by ``tests/training/negatives/fixtures/make_wordnet_fixture.py``), read through the same
Debian path as ``wordnet-base``, so these tests run on every machine; when Debian's full database
is installed the same expectations are checked on it too.
"""

from __future__ import annotations

import pathlib

import nltk
import pytest
from corruption_helpers import STORY, ListDonors, ScriptedRandom, as_story, text_of

from story_quality.training.negatives import nltk_resources
from story_quality.training.negatives.corruptions import CorruptionContext, KeywordTable, substitute
from story_quality.training.negatives.lexicon import Lexicon

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "wordnet"
DEBIAN = pathlib.Path(nltk_resources.DEBIAN_WORDNET_DIR)
SOURCES = [
    pytest.param(FIXTURE, id="fixture"),
    pytest.param(
        DEBIAN,
        id="debian",
        marks=pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="wordnet-base not installed"),
    ),
]


@pytest.fixture(scope="module", params=SOURCES)
def wordnet_lexicon(request, tmp_path_factory):
    """A Lexicon reading WordNet from ``request.param`` only (no extra antonyms, no ConceptNet).

    The NLTK-readable copy goes to a temporary cache; the folder it adds to ``nltk.data.path``
    is taken off again afterwards.
    """
    path_before = list(nltk.data.path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        lexicon = Lexicon(tagger="heuristic", wordnet="debian", debian_wordnet_dir=str(request.param))
        lexicon.resolve()
        lexicon._wordnet_reader()  # the copy is made now, under the temporary cache
        yield lexicon
    nltk.data.path[:] = path_before


def test_the_fixture_is_a_wordnet_database_nltk_reads(tmp_path):
    reader = nltk_resources.debian_wordnet(str(FIXTURE), str(tmp_path))
    try:
        assert reader is not None and reader.get_version() == "3.0"
        assert reader.synsets("happy", "a")[0].definition().startswith("enjoying or showing or marked by joy")
        assert [lemma.name() for lemma in reader.synset("day.n.01").lemmas()] == [
            "day",
            "daytime",
            "daylight",
        ]
        assert reader.synset("win.v.01").lemmas()[0].antonyms()[0].name() == "lose"
    finally:
        if str(tmp_path) in nltk.data.path:
            nltk.data.path.remove(str(tmp_path))


def test_the_lexicon_reports_debian_wordnet(wordnet_lexicon):
    assert wordnet_lexicon.describe()["wordnet"] == "debian"


@pytest.mark.parametrize(
    ("word", "tag", "antonyms"),
    [
        ("happy", "JJ", ("unhappy",)),
        ("unhappy", "JJ", ("happy",)),
        ("day", "NN", ("night",)),
        ("days", "NNS", ("nights",)),  # lemma "day", antonym inflected back to the plural
        ("won", "VBD", ("lost",)),  # lemma "win" (irregular), antonym "lose" put in the past
        ("wins", "VBZ", ("loses",)),
        ("winning", "VBG", ("losing",)),
        ("dog", "NN", ()),  # no antonym in WordNet
    ],
)
def test_wordnet_antonyms_inflected_like_the_word(wordnet_lexicon, word, tag, antonyms):
    assert wordnet_lexicon.antonyms_of(word, tag) == antonyms


def test_word_substitution_takes_the_wordnet_antonym(wordnet_lexicon):
    # As test_word_substitution_prefers_an_antonym, the antonym now from WordNet alone:
    # .9 -> word level; 9 keywords, m = 1; pick int(.5 * 9) = 4 -> "happy" -> "unhappy".
    story = as_story(wordnet_lexicon, STORY)
    ctx = CorruptionContext(
        lexicon=wordnet_lexicon,
        keywords=KeywordTable.from_counts({("JJ", "small"): 1}),
        donors=ListDonors([(0, story)]),
        story_index=0,
    )
    rng = ScriptedRandom([0.9, 0.0, 0.5, 0.0])
    corrupted, name = substitute(story, rng, ctx)
    assert name == "substitution:word"
    assert text_of(corrupted) == [STORY[0], STORY[1], "the dog was unhappy .", STORY[3], STORY[4]]
    assert rng.unused == 0
