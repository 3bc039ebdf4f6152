"""Fluent negatives: human sentences that lose the thread, filtered by a UNION checkpoint."""

from __future__ import annotations

import json

import datasets
import numpy as np
import pytest
import tiny_models
from transformers import BertModel

from story_quality.training import fluent_negatives
from story_quality.training.negatives.build import build_union_dataset
from story_quality.training.negatives.copy_replacement import GENERATED, replace_negatives
from story_quality.training.negatives.fluent_candidates import (
    FLUENT,
    FluentOptions,
    Neighbours,
    StoryTable,
    build_candidates,
    candidates_of,
    human_stories,
    most_human,
    nearest_others,
    split_sentences,
)
from story_quality.training.negatives.fluent_corpus import FilterSettings, make_fluent_corpus
from story_quality.training.negatives.lexicon import Lexicon
from story_quality.training.negatives.sentence_embeddings import cached_embeddings
from story_quality.union.normalization import ROC_STORIES

STORIES = [
    "Ken went to the store. He bought a new car. The car was red. He drove it home. His family loved it.",
    "Amy had a cat. The cat was very old. One day the cat ran away. Amy looked for it all night. She found it at school.",
    "Tom wanted a dog. He asked his mom for one. She said no. Tom was sad. Then his dad bought him a dog.",
    "Sue played in the park. She saw a big dog. The dog ran to her. She was scared. The dog just wanted to play.",
    "Bob lost his friend's book. He looked in the house. He could not find it. He bought a new one. His friend was happy.",
    "Jen made a cake for the school. It was very big. The children ate all of it. They asked for more. Jen made two.",
]
# A WritingPrompts text as a built row holds it: the prompt, then more sentences than a ROC story has.
LONG = "[ wp ] you wake up in a house that is not yours . " + " ".join(
    f"the {w} was there at night and i did not go home ."
    for w in ("dog", "cat", "car", "man", "friend", "day", "boy")
)


def random_table(seed: int = 0) -> tuple[StoryTable, np.ndarray]:
    """Six five-sentence stories of distinct sentences and random unit embeddings."""
    table = StoryTable(list(range(10, 16)), [[f"s{story} w{i} ." for i in range(5)] for story in range(6)])
    matrix = np.random.default_rng(seed).normal(size=(len(table.flat), 8)).astype(np.float32)
    return table, matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_a_built_row_splits_at_its_context_then_after_each_stop_with_closing_quotes_kept():
    assert split_sentences("a b . c d ! '' e f ? g", "a b .") == ["a b .", "c d ! ''", "e f ?", "g"]
    assert split_sentences("x y z", "x y z") == ["x y z"]
    with pytest.raises(ValueError, match="does not open with its context"):
        split_sentences("a b . c .", "z .")


def test_nearest_others_are_the_highest_cosines_of_other_stories_and_other_texts():
    table, matrix = random_table()
    texts = list(table.flat)
    texts[7] = texts[2]  # the same sentence in two stories is never its own neighbour
    near = nearest_others(matrix, table.owner, texts, k=4, chunk=3)
    for row in range(len(texts)):
        allowed = [
            j for j in range(len(texts)) if table.owner[j] != table.owner[row] and texts[j] != texts[row]
        ]
        best = sorted(allowed, key=lambda j: (-float(matrix[row] @ matrix[j]), j))[:4]
        assert near[row].tolist() == best
    padded = nearest_others(matrix[:6], np.array([0, 0, 0, 1, 1, 1]), texts[:6], k=5)
    assert (padded[:, 3:] == -1).all() and (padded[:, :3] >= 0).all()


def test_each_kind_keeps_human_sentences_and_breaks_the_story_where_it_says():
    table, matrix = random_table()
    near = Neighbours.of(table, matrix, neighbours=3)
    rng = np.random.default_rng(0)
    found = dict(candidates_of(1, table, near, rng, FluentOptions(draws=1)))
    assert set(found) == {"neighbour_sentences", "splice"}  # no prompt swap for ROC-length stories
    mine = table.sentences[1]
    replaced = split_sentences(found["neighbour_sentences"], mine[0])
    assert len(replaced) == len(mine) and replaced[0] == mine[0]
    changed = [i for i in range(1, len(mine)) if replaced[i] != mine[i]]
    assert 1 <= len(changed) <= 2  # k ~ U{1..ceil(4 / 2)}
    for i in changed:  # a sentence of another story, among the three nearest to the one it replaces
        assert replaced[i] in [table.flat[j] for j in near.sentences[int(table.first[1]) + i]]
    splice = found["splice"]
    assert splice.startswith(" ".join(mine[:3])) and not splice.endswith(" ".join(mine[3:]))
    donor = next(story for story in table.sentences if splice.endswith(" ".join(story[3:])))
    assert donor is not mine


def test_a_writing_prompt_gets_a_near_but_wrong_prompt_and_keeps_its_story():
    long = split_sentences(LONG, "[ wp ] you wake up in a house that is not yours .")
    assert len(long) == 8
    table = StoryTable([0, 1], [long, ["[ wp ] a dragon asks for tea .", *long[1:3], "the end ."]])
    matrix = np.eye(len(table.flat), 4, dtype=np.float32)
    matrix[:, 3] = 1
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    near = Neighbours.of(table, matrix, neighbours=2)
    found = dict(
        candidates_of(0, table, near, np.random.default_rng(1), FluentOptions(kinds=("prompt_swap",)))
    )
    assert found == {"prompt_swap": " ".join(["[ wp ] a dragon asks for tea .", *long[1:]])}
    assert (
        candidates_of(1, table, near, np.random.default_rng(1), FluentOptions(kinds=("prompt_swap",))) == []
    )


def test_candidates_depend_on_the_seed_and_the_story_alone():
    table, matrix = random_table()
    near = Neighbours.of(table, matrix, neighbours=3)
    options = FluentOptions()
    whole = build_candidates(table, near, 5, options, "fp-a")
    again = build_candidates(table, near, 5, options, "fp-b")
    assert whole["candidates"] == again["candidates"]
    alone = candidates_of(2, table, near, np.random.default_rng([5, table.story_index[2]]), options)
    assert [text for _, text in alone] == whole[2]["candidates"]
    assert build_candidates(table, near, 6, options, "fp-c")["candidates"] != whole["candidates"]


def test_most_human_keeps_each_story_s_best_candidates():
    rows = datasets.Dataset.from_dict(
        {"story_index": [3, 4], "candidates": [["a", "b", "c"], ["d"]], "kinds": [["x", "y", "z"], ["x"]]}
    )
    texts, kinds = most_human(rows, [0.1, 0.9, 0.5, 0.2], keep=2)
    assert texts == {3: ["b", "c"], 4: ["d"]} and kinds == {3: ["y", "z"], 4: ["x"]}
    with pytest.raises(ValueError, match="5 scores for 4 candidates"):
        most_human(rows, [0.1] * 5, keep=1)


def test_fluent_rows_leave_copies_another_generated_kind_wrote():
    corpus = datasets.Dataset.from_list(
        [
            {"text": "h", "label": 1, "story_index": 0, "original": "h", "corruptions": []},
            {"text": "lm", "label": 0, "story_index": 0, "original": "h", "corruptions": [GENERATED]},
            {"text": "c", "label": 0, "story_index": 0, "original": "h", "corruptions": ["reordering"]},
        ]
    )
    swapped, summary = replace_negatives(corpus, {0: ["f"]}, 1.0, 0, label=FLUENT)
    assert swapped["text"] == ["h", "lm", "f"] and swapped["corruptions"][2] == [FLUENT]
    assert summary["replaced"] == 1
    assert replace_negatives(corpus, {0: ["f"]}, 1.0, 0)[0]["corruptions"][2] == [GENERATED]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("fluent-models")
    tok = tiny_models.tokenizer(model_max_length=64)
    encoder = BertModel(tiny_models.bert_config(len(tok)))
    encoder.save_pretrained(root / "encoder")
    tok.save_pretrained(root / "encoder")
    scorer = tiny_models.save_union_checkpoint(
        root / "union", normalization=ROC_STORIES.to_dict(), max_length=64
    )
    return root / "encoder", scorer


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    built = build_union_dataset(
        datasets.Dataset.from_dict({"text": STORIES}),
        normalization=ROC_STORIES,
        seed=3,
        lexicon=Lexicon(tagger="heuristic", wordnet="none"),
    )
    folder = tmp_path_factory.mktemp("fluent-corpus") / "corpus"
    built.save_to_disk(str(folder))
    return folder


def test_the_corpus_gets_the_filter_s_most_human_candidates_and_a_summary_that_rebuilds(
    models, corpus_dir, tmp_path
):
    encoder, scorer = models
    settings = {"fraction": 1.0, "seed": 4, "scoring": FilterSettings(str(scorer), 64, 8)}
    cache = tmp_path / "cache"
    first = make_fluent_corpus(corpus_dir, tmp_path / "a", encoder, cache_dir=cache, **settings)
    second = make_fluent_corpus(corpus_dir, tmp_path / "b", encoder, cache_dir=cache, **settings)
    assert (first["embeddings"]["cached"], second["embeddings"]["cached"]) == ("written", "read")
    assert first["rows_sha256"] == second["rows_sha256"] and first["replaced"] == len(STORIES)
    out = datasets.load_from_disk(str(tmp_path / "a"))
    fluent = [row for row in out if row["corruptions"] == [FLUENT]]
    assert len(fluent) == len(STORIES)
    humans = {row["story_index"]: row["text"] for row in out if row["label"] == 1}
    for row in fluent:
        assert row["text"] != humans[row["story_index"]]
        assert row["text"].split(" . ")[0] in {h.split(" . ")[0] for h in humans.values()}
    report = first["candidates"]
    assert sum(kind["kept"] for name, kind in report.items() if name != "human stories") == 2 * len(STORIES)
    saved = json.loads((tmp_path / "a" / "fluent_negatives_summary.json").read_text())
    assert saved["rows_sha256"] == first["rows_sha256"]
    assert human_stories(out).sentences == human_stories(datasets.load_from_disk(str(corpus_dir))).sentences


def test_a_tampered_cache_is_computed_again(models, tmp_path):
    encoder, _ = models
    sentences = ["a b .", "c d ."]
    matrix, record = cached_embeddings(encoder, sentences, tmp_path)
    np.save(tmp_path / f"embeddings-{record['key']}.npy", matrix + 1)
    again, record_again = cached_embeddings(encoder, sentences, tmp_path)
    assert record_again["cached"] == "written" and np.array_equal(again, matrix)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1, atol=1e-5)


def test_bad_options_are_usage_errors_naming_them(models, corpus_dir, tmp_path, capsys):
    encoder, scorer = models
    base = [str(corpus_dir), str(tmp_path / "out"), "--encoder", str(encoder), "--scorer", str(scorer)]
    for extra, message in (
        (["--fraction", "1.5"], "--fraction must be in [0, 1], got 1.5"),
        (["--kinds", "splice,rhyme"], "kinds must be distinct names among"),
        (["--keep", "0"], "--keep: must be at least 1"),
        (
            ["--keep", "7"],  # above the 2 draws x 3 kinds: the filter would keep every candidate
            "--keep 7 is above the 6 candidates a story is drawn at most (--draws 2 x 3 kinds)",
        ),
        (
            ["--keep", "3", "--kinds", "prompt_swap"],
            "--keep 3 is above the 2 candidates a story is drawn",
        ),
    ):
        with pytest.raises(SystemExit) as stopped:
            fluent_negatives.main([*base, *extra])
        assert stopped.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        fluent_negatives.main([str(corpus_dir), str(tmp_path / "out"), "--encoder", str(tmp_path / "none")])
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
