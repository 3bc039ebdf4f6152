"""Word knowledge behind the corruptions: fallback tagger, morphology, antonyms, NLTK/Debian/ConceptNet."""

import json
import logging
import pathlib

import pytest

from story_quality.training.negatives import nltk_resources
from story_quality.training.negatives.lexicon import Lexicon, load_conceptnet
from story_quality.training.negatives.morphology import inflect, verb_lemma
from story_quality.training.negatives.pos_heuristic import heuristic_pos_tag

DEBIAN = pathlib.Path(nltk_resources.DEBIAN_WORDNET_DIR)


@pytest.mark.parametrize(
    ("sentence", "tags"),
    [
        ("[MALE] walked to the store .", "NNP VBD TO DT NN ."),
        ("she likes to swim .", "PRP VBZ TO VB ."),
        ("they have eaten the cake .", "PRP VBP VBN DT NN ."),
        ("he was running quickly .", "PRP VBD VBG RB ."),
        ("i could not sleep , so i read .", "PRP MD RB VB , RB PRP VBP ."),
        ("the happy dogs barked loudly !", "DT JJ NNS VBD RB ."),
        ("her mother gave her 3 apples .", "PRP$ NN VBD PRP CD NNS ."),
    ],
)
def test_fallback_tagger_on_simple_story_sentences(sentence, tags):
    assert heuristic_pos_tag(sentence.split()) == tags.split()


@pytest.mark.parametrize(
    ("form", "tag", "lemma"),
    [
        ("went", "VBD", "go"),
        ("taken", "VBN", "take"),
        ("walked", "VBD", "walk"),
        ("hoped", "VBD", "hope"),
        ("planned", "VBD", "plan"),
        ("called", "VBD", "call"),
        ("danced", "VBD", "dance"),
        ("carried", "VBD", "carry"),
        ("watches", "VBZ", "watch"),
        ("flies", "VBZ", "fly"),
        ("likes", "VBZ", "like"),
    ],
)
def test_rule_based_lemmas(form, tag, lemma):
    assert verb_lemma(form, tag) == lemma


@pytest.mark.parametrize("lemma", ["hate", "walk", "stop", "cry", "go", "love", "fix"])
@pytest.mark.parametrize("tag", ["VBD", "VBZ", "VBG"])
def test_inflect_then_lemmatise_round_trips(lemma, tag):
    assert verb_lemma(inflect(lemma, tag), tag) == lemma


def test_extra_antonyms_are_inflected_like_the_word_they_replace():
    lexicon = Lexicon(tagger="heuristic", wordnet="none", antonyms={"love": ["hate"], "win": ["lose"]})
    assert lexicon.antonyms_of("loved", "VBD") == ("hated",)
    assert lexicon.antonyms_of("wins", "VBZ") == ("loses",)
    assert lexicon.antonyms_of("won", "VBD") == ("lost",)
    assert lexicon.antonyms_of("table", "NN") == ()


def test_keywords_are_content_words_by_pos():
    lexicon = Lexicon(tagger="heuristic", wordnet="none")
    words = "he was n't very happy about the old dog 's 2 bones .".split()
    keywords = [w for w, t in zip(words, heuristic_pos_tag(words), strict=True) if lexicon.is_keyword(w, t)]
    assert keywords == ["happy", "old", "dog", "bones"]


def test_conceptnet_file_gives_antonyms_and_restricts_keywords(tmp_path):
    def line(relation, start, end):
        return "\t".join((f"/a/[{relation}/,{start}/,{end}/]", relation, start, end, json.dumps({}))) + "\n"

    path = tmp_path / "assertions.csv"
    path.write_text(
        line("/r/Antonym", "/c/en/hot/a", "/c/en/cold")
        + line("/r/Antonym", "/c/fr/chaud", "/c/fr/froid")
        + line("/r/NotDesires", "/c/en/dog", "/c/en/bath")
        + line("/r/IsA", "/c/en/cat", "/c/en/animal")
        + line("/r/Antonym", "/c/en/ice_cream", "/c/en/soup")
    )
    antonyms, vocabulary = load_conceptnet(path)
    assert antonyms == {"hot": ("cold",), "cold": ("hot",)}
    assert vocabulary == {"hot", "cold", "dog", "bath", "soup"}
    lexicon = Lexicon(tagger="heuristic", wordnet="none", conceptnet=str(path))
    assert lexicon.antonyms_of("hot", "JJ") == ("cold",)
    assert lexicon.is_keyword("dog", "NN") and not lexicon.is_keyword("cat", "NN")
    assert lexicon.describe()["conceptnet"] == "assertions.csv"


def test_conceptnet_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.csv"):
        load_conceptnet(tmp_path / "nowhere.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("just one field\n")
    with pytest.raises(ValueError, match="bad.csv:1"):
        load_conceptnet(bad)


def test_unknown_resource_choices_are_refused():
    with pytest.raises(ValueError, match="tagger"):
        Lexicon(tagger="spacy").resolve()
    with pytest.raises(ValueError, match="wordnet"):
        Lexicon(tagger="heuristic", wordnet="omw").resolve()


def test_missing_debian_wordnet_is_an_error_when_asked_for_and_a_single_warning_otherwise(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(nltk_resources, "nltk_wordnet", lambda: None)
    monkeypatch.setattr(nltk_resources, "_warned", set())
    with pytest.raises(LookupError, match="wordnet-base"):
        nltk_resources.find_wordnet("debian", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="story_quality.training.negatives.nltk_resources"):
        assert nltk_resources.find_wordnet("auto", str(tmp_path)) == (None, "none")
        assert nltk_resources.find_wordnet("auto", str(tmp_path)) == (None, "none")
    assert sum("WordNet is not installed" in r.message for r in caplog.records) == 1


def test_lexnames_is_the_standard_list_of_45_lexicographer_files():
    lines = nltk_resources.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    assert lines[29] == "29\tverb.body\t2"


@pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")
def test_debian_wordnet_files_are_readable_by_nltk(tmp_path):
    reader = nltk_resources.debian_wordnet(str(DEBIAN), str(tmp_path))
    assert (tmp_path / "corpora" / "wordnet" / "lexnames").is_file()
    assert reader.morphy("went", "v") == "go"
    assert "bad" in {
        a.name() for s in reader.synsets("good", "a") for lemma in s.lemmas() for a in lemma.antonyms()
    }


@pytest.mark.parametrize(
    "module",
    [
        "story_quality.training.negatives.morphology",
        "story_quality.training.negatives.pos_heuristic",
        "story_quality.training.negatives.negation",
        "story_quality.training.corpora",
    ],
)
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_an_installed_nltk_tagger_is_used_and_placeholders_stay_proper_nouns(monkeypatch):
    class FakePerceptron:
        def tag(self, tokens):
            return [(token, "XX") for token in tokens]

    monkeypatch.setattr(nltk_resources, "perceptron_tagger", lambda: FakePerceptron())
    lexicon = Lexicon(tagger="auto", wordnet="none")
    assert lexicon.tag(["[MALE]", "ran"]) == ["NNP", "XX"]
    assert lexicon.describe()["pos_tagger"] == "nltk-perceptron"


def test_asking_for_a_missing_nltk_tagger_is_an_error(monkeypatch):
    monkeypatch.setattr(nltk_resources, "perceptron_tagger", lambda: None)
    with pytest.raises(LookupError, match="averaged_perceptron_tagger_eng"):
        Lexicon(tagger="nltk", wordnet="none").resolve()
    assert Lexicon(tagger="auto", wordnet="none").describe()["pos_tagger"] == "heuristic"


def test_a_debian_copy_on_the_nltk_path_is_not_mistaken_for_nltks_download(tmp_path):
    """The Debian copy goes on nltk.data.path (NLTK reads nothing outside it); NLTK's own loader
    must then not choke on that copy, which lacks the sense index a full download has."""
    if not (DEBIAN / "index.noun").is_file():
        pytest.skip("Debian's wordnet-base is not installed")
    nltk_resources.nltk_wordnet.cache_clear()
    nltk_resources.debian_wordnet(str(DEBIAN), str(tmp_path))
    try:
        reader, source = nltk_resources.find_wordnet("auto", str(DEBIAN))
    finally:
        nltk_resources.nltk_wordnet.cache_clear()
    assert source in {"nltk", "debian"}
    assert reader.morphy("went", "v") == "go"


def _copy_wordnet_when_told(cache_dir: str, start) -> None:
    """One of several processes making the NLTK copy into one cache at the same moment."""
    start.wait()
    nltk_resources.debian_wordnet_root(DEBIAN, cache_dir)


@pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")
def test_the_debian_copy_is_never_seen_half_written(tmp_path):
    # Processes making the copy at the same moment (datasets.map workers) must never see a
    # half-written file, nor spoil each other's: four writers released together, one watcher.
    import multiprocessing
    import threading

    target = tmp_path / "corpora" / "wordnet" / "data.noun"
    full = (DEBIAN / "data.noun").stat().st_size
    seen: set[int] = set()
    done = threading.Event()

    def watch():
        while not done.is_set():
            try:
                seen.add(target.stat().st_size)
            except FileNotFoundError:
                pass

    context = multiprocessing.get_context("fork")
    start = context.Event()
    writers = [context.Process(target=_copy_wordnet_when_told, args=(str(tmp_path), start)) for _ in range(4)]
    for writer in writers:
        writer.start()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        start.set()
        for writer in writers:
            writer.join(timeout=120)
    finally:
        done.set()
        watcher.join()
    assert [writer.exitcode for writer in writers] == [0] * 4
    assert seen <= {full}
    assert target.read_bytes() == (DEBIAN / "data.noun").read_bytes()
    assert not [p.name for p in target.parent.iterdir() if p.name.startswith(".")]  # no temporary left


def _look_up_adjectives(cache_dir: str, words: tuple[str, ...]) -> None:
    """What a ``datasets.map`` worker does: look words up with the reader its parent made."""
    reader = nltk_resources.debian_wordnet(str(DEBIAN), cache_dir)  # lru_cache: the parent's
    for word in words:
        assert reader.synsets(word, "a")


@pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")
def test_a_forked_worker_does_not_move_the_parents_wordnet_reads(tmp_path):
    # datasets.map(num_proc=2) forks workers from a process whose reader has data.adj open (NLTK
    # opens it while the reader is made). NLTK reads a synset by seek(offset), then readline();
    # with the open file (and its position) shared, another process's lookup in between moved
    # the read: "No WordNet synset found" at valid offsets. Here a worker's lookup falls between
    # the two halves of one in the parent.
    import multiprocessing

    reader = nltk_resources.debian_wordnet(str(DEBIAN), str(tmp_path))
    offset = reader.synsets("good", "a")[0].offset()
    data = reader._data_file("a")  # the file NLTK's adjective lookups read
    data.seek(offset)  # first half of a lookup ...
    worker = multiprocessing.get_context("fork").Process(
        target=_look_up_adjectives, args=(str(tmp_path), ("cold", "hard", "quiet"))
    )
    worker.start()
    worker.join()
    assert worker.exitcode == 0
    assert data.readline().startswith(f"{offset:08d} ")  # ... second half: still the line asked for
