"""The negative-sampling pipeline as ``datasets.map``: columns, pairing, reproducibility, bad input."""

import json

import datasets
import pytest

from story_quality.training.negatives.build import (
    LABELS,
    build_union_dataset,
    clean_text,
    normalization_of,
    read_summary,
)
from story_quality.training.negatives.corruptions import TECHNIQUE_PROBS
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.union.normalization import (
    CONFIG_KEY,
    ROC_STORIES,
    WRITING_PROMPTS,
    StoryNormalization,
)

NAMES = ["Ken", "Mary", "John", "Susan", "Tom", "Amy"]
PLACES = ["the park", "the store", "school", "the beach", "the lake", "the city"]
THINGS = ["a red kite", "a new bike", "some bread", "a big cake", "a small dog", "a blue hat"]


def make_stories(n):
    """Five-sentence ROC-like stories, all different."""
    stories = []
    for i in range(n):
        name, place, thing = NAMES[i % 6], PLACES[(i // 6) % 6], THINGS[(i + i // 6) % 6]
        stories.append(
            f"{name} went to {place} on day {i}. {name} wanted {thing}. "
            f"It was very expensive. {name} didn't have enough money. "
            f"{name} walked home and cried."
        )
    return stories


def lexicon():
    return Lexicon(
        tagger="heuristic", wordnet="none", antonyms={"expensive": ["cheap"], "enough": ["little"]}
    )


def build(texts, **kwargs):
    kwargs.setdefault("lexicon", lexicon())
    return build_union_dataset(datasets.Dataset.from_dict({"text": texts}), **kwargs)


@pytest.fixture(scope="module")
def built():
    return build(make_stories(40))


def test_columns_labels_and_one_pair_per_story(built):
    assert built.column_names == ["text", "label", "original", "context", "corruptions", "story_index"]
    assert built.features["label"].names == LABELS == ["perturbed", "human"]
    assert len(built) == 80
    rows = built.to_list()
    for human, perturbed in zip(rows[::2], rows[1::2], strict=True):
        assert human["story_index"] == perturbed["story_index"]
        assert (human["label"], perturbed["label"]) == (1, 0)
        assert human["corruptions"] == [] and perturbed["corruptions"]
        assert human["text"] == human["original"] == perturbed["original"]
        assert perturbed["text"] != perturbed["original"]
    assert sorted({r["story_index"] for r in rows}) == list(range(40))


def test_human_rows_are_the_shared_normalisation_and_context_is_sentence_0(built):
    stories = make_stories(40)
    for row in built.to_list():
        sentences = ROC_STORIES.sentences(stories[row["story_index"]])
        assert row["original"] == " ".join(sentences)
        assert row["context"] == sentences[0]
        assert row["text"].startswith(row["context"] + " ")


def test_summary_records_counts_normalisation_and_resources(built):
    summary = read_summary(built)
    assert summary["rows"] == 80 and summary["stories"] == 40 and summary["kept_stories"] == 40
    assert summary["skipped"] == {
        "empty": 0,
        "not_text": 0,
        "too_long": 0,
        "too_few_sentences": 0,
        "uncorruptible": 0,
    }
    perturbed = [
        names for names, label in zip(built["corruptions"], built["label"], strict=True) if label == 0
    ]
    assert sum(summary["corruptions"].values()) == sum(len(n) for n in perturbed)
    assert sum(summary["techniques_per_story"].values()) == 40
    assert summary[CONFIG_KEY] == ROC_STORIES.to_dict()
    assert normalization_of(built) == ROC_STORIES
    assert summary["lexicon"]["pos_tagger"] == "heuristic" and summary["lexicon"]["wordnet"] == "none"
    assert json.loads(built.info.description) == summary


def test_same_corpus_for_any_num_proc_and_batch_size(built):
    again = build(make_stories(40), num_proc=2, batch_size=7)
    assert again.to_list() == built.to_list()


def test_seed_changes_the_corpus_and_the_same_seed_repeats_it(built):
    assert build(make_stories(40), seed=42).to_list() == built.to_list()
    other = build(make_stories(40), seed=7)
    assert other["original"] == built["original"]
    assert other["text"] != built["text"]


def test_a_story_is_corrupted_the_same_way_whatever_else_is_in_the_corpus(built):
    """Seeded by (seed, row): other rows matter only as donors (sentences, keyword frequencies)."""
    head = build(make_stories(40)[:20]).to_list()
    compared = 0
    for mine, full in zip(head, built.to_list()[:40], strict=True):
        if not any(name.startswith("substitution") for name in full["corruptions"]):
            assert mine == full
            compared += 1
    assert compared >= 20


def test_bad_rows_are_skipped_and_counted_without_crashing():
    texts = [
        *make_stories(6),
        None,
        "",
        "   \n\t ",
        "Only one sentence here.",
        "Two sentences. Not enough.",
        "\u200b\u200b\ufeff",
        "Ｆｕｌｌ ｗｉｄｔｈ ｓｔｏｒｙ． Ken\x00 saw 🎉 a café. He ran\u0301 home! Then he slept in a bed.",
        "مرحبا. שלום עולם. Ken was here. He left.",
    ]
    out = build(texts)
    summary = read_summary(out)
    assert summary["skipped"]["empty"] == 4
    assert summary["skipped"]["too_few_sentences"] == 2
    assert summary["kept_stories"] == 8 and len(out) == 16
    assert "\x00" not in "".join(out["text"])


def test_non_text_values_are_skipped_as_not_text():
    stories = datasets.Dataset.from_dict({"text": make_stories(4), "numbers": [1, 2, 3, 4]})
    out = build_union_dataset(stories, text_column="numbers", lexicon=lexicon())
    assert len(out) == 0
    assert read_summary(out)["skipped"]["not_text"] == 4
    listed = datasets.Dataset.from_dict({"text": [["a list", "of strings"]] * 3})
    assert read_summary(build_union_dataset(listed, lexicon=lexicon()))["skipped"]["not_text"] == 3


def test_empty_corpus_gives_an_empty_dataset_with_the_columns():
    out = build([])
    assert len(out) == 0 and "label" in out.column_names
    assert read_summary(out)["stories"] == 0


def test_clean_text_removes_only_invisible_characters():
    assert clean_text("a\u200bb\x07c\ud800d") == ("a b c d", "")
    assert clean_text("café — naïve") == ("café — naïve", "")
    assert clean_text(None) == (None, "empty")
    assert clean_text(3.5) == (None, "not_text")
    assert clean_text("\u200b ") == (None, "empty")


def test_missing_column_and_wrong_arguments_get_clear_errors():
    stories = datasets.Dataset.from_dict({"story": ["A. B. C."]})
    with pytest.raises(ValueError, match="no column 'text'.*story"):
        build_union_dataset(stories, lexicon=lexicon())
    with pytest.raises(TypeError, match="datasets.Dataset"):
        build_union_dataset(["A. B. C."], lexicon=lexicon())
    with pytest.raises(ValueError, match="min_sentences"):
        build(make_stories(2), min_sentences=1)


def test_a_story_that_cannot_be_corrupted_is_skipped_as_uncorruptible():
    # sentences "!": nothing to repeat, negate or substitute, reordering identical sentences
    # changes nothing, and a one-story corpus has no donor
    out = build(["Hello there friend. ! ! !"])
    summary = read_summary(out)
    assert summary["skipped"]["uncorruptible"] == 1 and len(out) == 0


def test_writing_prompts_normalisation_is_cased_and_recorded():
    story = "The dragon woke up.\nKen ran to the castle. He did not look back. The gate was closed."
    out = build([story] * 3, normalization=WRITING_PROMPTS)
    assert out[0]["context"] == "The dragon woke up ."
    assert normalization_of(out) == WRITING_PROMPTS
    identity = build(make_stories(3), normalization=StoryNormalization())
    assert identity[0]["context"] == make_stories(3)[0].split(". ")[0] + "."


def test_a_corpus_on_disk_is_cached_and_a_new_seed_is_a_new_cache_entry(tmp_path):
    datasets.Dataset.from_dict({"text": make_stories(12)}).save_to_disk(str(tmp_path / "stories"))
    stories = datasets.load_from_disk(str(tmp_path / "stories"))
    first = build_union_dataset(stories, lexicon=lexicon())
    again = build_union_dataset(stories, lexicon=lexicon())
    assert first.cache_files and again.cache_files == first.cache_files
    assert again.to_list() == first.to_list()
    reseeded = build_union_dataset(stories, lexicon=lexicon(), seed=1)
    assert reseeded.cache_files != first.cache_files


def test_technique_weights_are_recorded_and_build_another_corpus():
    texts = make_stories(12)
    default = build(texts)
    assert read_summary(default)["technique_probs"] == TECHNIQUE_PROBS
    ours = build(texts, technique_probs={"reordering": 1.0})
    summary = read_summary(ours)
    assert summary["technique_probs"] == {"reordering": 1.0}
    assert set(summary["corruptions"]) == {"reordering"}
    assert ours.to_list() != default.to_list()
    assert build(texts, technique_probs={"reordering": 1.0}, num_proc=2).to_list() == ours.to_list()
    with pytest.raises(ValueError, match="unknown corruption technique"):
        build(texts, technique_probs={"shuffle": 1.0})
