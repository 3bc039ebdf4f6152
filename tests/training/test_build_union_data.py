"""The ``build_union_data`` command line: help, save to disk, summary file, argument errors."""

import json
import pathlib
import subprocess
import sys

import datasets
import pytest

from story_quality.training import build_union_data
from story_quality.union.normalization import CONFIG_KEY, ROC_STORIES, WRITING_PROMPTS

REPO = pathlib.Path(__file__).resolve().parents[2]

STORY = (
    "{name} went to the park. {name} saw a dog. The dog was happy. {name} threw a ball. They played all day."
)
# Word knowledge every machine has: quick, and the same rows everywhere.
PLAIN_LEXICON = ["--tagger", "heuristic", "--wordnet", "none"]


def test_help_explains_the_tool():
    result = subprocess.run(
        [sys.executable, "training/build_union_data.py", "--help"],  # the documented way, from a clone
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "UNION's training set" in result.stdout
    assert "--push-to-hub" in result.stdout and "mintujupally/ROCStories" in result.stdout


def test_builds_saves_and_prints_the_summary(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text(
        "\n".join([STORY.format(name=n) for n in ("Ken", "Mary", "Tom", "Sue")] + ["", "Too short."])
    )
    out_dir = tmp_path / "out"
    code = build_union_data.main(
        [
            str(source),
            "--output-dir",
            str(out_dir),
            "--tagger",
            "heuristic",
            "--wordnet",
            "none",
            "--seed",
            "3",
        ]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    saved = datasets.load_from_disk(str(out_dir))
    assert len(saved) == 8 and printed["rows"] == 8
    assert printed["skipped"]["empty"] == 1 and printed["skipped"]["too_few_sentences"] == 1
    assert printed[CONFIG_KEY] == ROC_STORIES.to_dict() and printed["seed"] == 3
    assert json.loads((out_dir / build_union_data.SUMMARY_FILE).read_text()) == printed
    assert json.loads(saved.info.description) == printed


def test_nothing_to_do_is_an_argument_error(capsys):
    with pytest.raises(SystemExit) as error:
        build_union_data.main(["stories.txt"])
    assert error.value.code == 2
    assert "--output-dir" in capsys.readouterr().err


def test_technique_weights_reach_the_build_and_bad_ones_are_usage_errors(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Tom")))
    common = [str(source), "--output-dir", str(tmp_path / "out"), *PLAIN_LEXICON]
    assert build_union_data.main([*common, "--technique-probs", "reordering=1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["technique_probs"] == {"reordering": 1.0}
    assert set(printed["corruptions"]) == {"reordering"}
    with pytest.raises(SystemExit) as error:
        build_union_data.main([*common, "--technique-probs", "repetition=lots"])
    assert error.value.code == 2
    assert "'repetition=lots' is not NAME=NUMBER" in capsys.readouterr().err


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match=r"^error: Story file not found: .*missing.txt"):
        build_union_data.main([str(tmp_path / "missing.txt"), "--output-dir", str(tmp_path / "o")])


def test_normalisation_follows_the_corpus_unless_chosen():
    assert build_union_data.choose_normalization("auto", "euclaise/writingprompts") == WRITING_PROMPTS
    assert build_union_data.choose_normalization("auto", "mintujupally/ROCStories") == ROC_STORIES
    assert build_union_data.choose_normalization("roc", "euclaise/writingprompts") == ROC_STORIES


def test_a_bad_corpus_file_ends_the_command_with_its_name_and_line(tmp_path):
    source = tmp_path / "stories.txt"
    source.write_bytes(
        STORY.format(name="Ken").encode() + b"\n\xff" + STORY.format(name="Sue").encode() + b"\n"
    )
    with pytest.raises(SystemExit, match=r"^error: .*stories\.txt, line 2: byte 0xff is not UTF-8"):
        build_union_data.main([str(source), "--output-dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_wp_segments_turn_each_long_story_into_several_human_rows(tmp_path, capsys):
    source = tmp_path / "wp.jsonl"
    long_story = " ".join(f"Ken saw bird number {i} in the old park ." for i in range(60))  # 600 words
    source.write_text(json.dumps({"prompt": "[ WP ] Birds .", "story": long_story}) + "\n")
    common = ["--tagger", "heuristic", "--wordnet", "none", "--normalization", "wp"]
    assert build_union_data.main([str(source), "--output-dir", str(tmp_path / "one"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["wp_segments"] == 1
    assert (
        build_union_data.main(
            [str(source), "--output-dir", str(tmp_path / "all"), "--wp-segments", "5", *common]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    humans = [row["text"] for row in datasets.load_from_disk(str(tmp_path / "all")) if row["label"] == 1]
    assert printed["wp_segments"] == 5 and printed["stories"] == len(humans) == 3
    assert humans[0].startswith("Birds .") and humans[1].startswith("Ken saw bird number 20 ")


def test_an_ngram_corpus_fits_the_continuations_without_the_corpus_own_stories(tmp_path, capsys):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary", "Tom", "Sue")))
    outside = tmp_path / "outside.txt"
    elsewhere = "The red kite flew high. The wind was cold. Birds sang loudly. Rain fell at noon."
    # the second line opens like a corpus story (after normalisation): left out of the model
    outside.write_text(elsewhere + "\n" + STORY.format(name="Ken").lower() + "\n")
    common = [str(source), *PLAIN_LEXICON, "--ngram-fraction", "1"]
    out_dir = tmp_path / "out"
    assert build_union_data.main([*common, "--output-dir", str(out_dir), "--ngram-corpus", str(outside)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["ngram_continuations"]["model_corpus"] == {
        "sources": [str(outside)],
        "stories": 1,
        "dropped_shared_contexts": 1,
    }
    vocabulary = {word for sentence in ROC_STORIES.sentences(elsewhere) for word in sentence.split()}
    for row in datasets.load_from_disk(str(out_dir)):
        if row["label"] == 0:
            assert set(row["text"][len(row["context"]) + 1 :].split()) <= vocabulary


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ngram-corpus", "{outside}"], "give --ngram-fraction too"),
        (["--ngram-fraction", "0.5", "--ngram-corpus", "{missing}"], "missing.txt: no such file"),
    ],
)
def test_a_bad_ngram_corpus_is_a_usage_error(tmp_path, capsys, extra, message):
    source = tmp_path / "stories.txt"
    source.write_text(STORY.format(name="Ken"))
    (tmp_path / "outside.txt").write_text(STORY.format(name="Sue"))
    names = {"outside": str(tmp_path / "outside.txt"), "missing": str(tmp_path / "missing.txt")}
    with pytest.raises(SystemExit) as error:
        build_union_data.main(
            [str(source), "--output-dir", str(tmp_path / "out"), *(a.format(**names) for a in extra)]
        )
    assert error.value.code == 2 and message in capsys.readouterr().err


def test_an_ngram_corpus_with_no_story_left_ends_the_command(tmp_path):
    source = tmp_path / "stories.txt"
    source.write_text("\n".join(STORY.format(name=n) for n in ("Ken", "Mary")))
    outside = tmp_path / "outside.txt"
    outside.write_text(STORY.format(name="Ken") + "\n")
    with pytest.raises(SystemExit, match="no story left to fit the n-gram model on"):
        build_union_data.main(
            [str(source), "--output-dir", str(tmp_path / "out"), *PLAIN_LEXICON]
            + ["--ngram-fraction", "1", "--ngram-corpus", str(outside)]
        )
    assert not (tmp_path / "out").exists()
