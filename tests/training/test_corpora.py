"""Loading human stories: local files, column detection, WritingPrompts layout, clear errors."""

import csv
import json

import datasets
import pytest

from story_quality.training import corpora
from story_quality.training.corpora import (
    cut_story,
    load_stories,
    writing_prompts_segments,
    writing_prompts_text,
)
from story_quality.union.normalization import split_sentences

STORIES = ["Ken went home. He slept. He woke up.", "Mary sang. It rained. She left."]


def test_txt_is_one_story_per_line_blank_lines_kept_as_empty_rows(tmp_path):
    path = tmp_path / "stories.txt"
    path.write_text(STORIES[0] + "\n\n" + STORIES[1] + "\n", encoding="utf-8")
    ds = load_stories(str(path))
    assert ds.column_names == ["text"]
    assert list(ds["text"]) == [STORIES[0], "", STORIES[1]]


def test_jsonl_json_and_csv_with_a_chosen_column(tmp_path):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(json.dumps({"id": i, "body": s}) for i, s in enumerate(STORIES)))
    assert list(load_stories(str(jsonl), text_column="body")["text"]) == STORIES
    as_json = tmp_path / "s.json"
    as_json.write_text(json.dumps([{"text": s} for s in STORIES]))
    assert list(load_stories(str(as_json))["text"]) == STORIES
    as_csv = tmp_path / "s.csv"
    with as_csv.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["storyid", *corpora.ROC_SENTENCE_COLUMNS])
        writer.writeheader()
        writer.writerow(
            {"storyid": "a", **dict(zip(corpora.ROC_SENTENCE_COLUMNS, "A. B. C. D. E.".split(), strict=True))}
        )
    assert list(load_stories(str(as_csv))["text"]) == ["A. B. C. D. E."]
    assert list(load_stories(str(jsonl), text_column="body", max_rows=1)["text"]) == STORIES[:1]


def test_non_text_values_become_empty_rows_with_a_warning(tmp_path, caplog):
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps({"text": v}) for v in [STORIES[0], 42, None, ["x"], STORIES[1]]))
    ds = load_stories(str(path))
    assert list(ds["text"]) == [STORIES[0], None, None, None, STORIES[1]]
    assert "2 rows have a non-text" in caplog.text


def test_a_byte_that_is_not_utf8_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes(b"Ken went home. He slept. He woke.\nCaf\xe9 story. It was good. The end.\n")
    with pytest.raises(ValueError, match=r"s\.txt, line 2: byte 0xe9 is not UTF-8"):
        load_stories(str(path))
    csv_path = tmp_path / "s.csv"
    csv_path.write_bytes(b"text\nfine. fine. fine.\n\xff bad. bad. bad.\n")
    with pytest.raises(ValueError, match=r"s\.csv, line 3: byte 0xff"):
        load_stories(str(csv_path))
    bom = tmp_path / "bom.txt"
    bom.write_bytes("\ufeffKen went home. He slept. He woke.\n".encode())
    assert load_stories(str(bom))["text"] == ["Ken went home. He slept. He woke."]  # a BOM is UTF-8


def test_binary_and_empty_files_are_refused_by_name(tmp_path):
    binary = tmp_path / "model.txt"
    binary.write_bytes(b"PK\x03\x04\x00\x00" + bytes(range(256)))
    with pytest.raises(ValueError, match=r"model\.txt: binary data"):
        load_stories(str(binary))
    for name, content in (("empty.txt", b""), ("blank.jsonl", b"\n  \n")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=rf"{name} is empty"):
            load_stories(str(tmp_path / name))


def test_a_row_without_the_story_column_is_named_by_its_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"text": STORIES[0]}) + "\n\n" + json.dumps({"title": "no story"}) + "\n")
    with pytest.raises(ValueError, match=r"s\.jsonl, line 3: no 'text' field"):
        load_stories(str(path))


def test_a_one_megabyte_line_is_kept_by_the_reader_and_skipped_as_too_long_by_the_build(tmp_path):
    from story_quality.training.negatives.build import MAX_STORY_CHARACTERS, build_union_dataset

    path = tmp_path / "s.txt"
    huge = "Ken went home. " * 70_000  # about 1 MB on one line
    path.write_text("\n".join([STORIES[0], huge, STORIES[1]]))
    stories = load_stories(str(path))
    assert len(stories) == 3 and len(stories["text"][1]) > MAX_STORY_CHARACTERS
    from story_quality.training.negatives.lexicon import Lexicon

    built = build_union_dataset(stories, seed=0, lexicon=Lexicon(tagger="heuristic", wordnet="none"))
    summary = json.loads(built.info.description)
    assert summary["skipped"]["too_long"] == 1 and summary["rows"] == 4


def test_clear_errors_for_missing_file_column_format_and_bad_json(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_stories(str(tmp_path / "nope.txt"))
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"body": "x"}))
    with pytest.raises(ValueError, match=r"no column 'story'.*'body'"):
        load_stories(str(path), text_column="story")
    with pytest.raises(ValueError, match="cannot tell which column"):
        load_stories(str(path))
    broken = tmp_path / "b.jsonl"
    broken.write_text('{"text": "a"}\n{"text": \n')
    with pytest.raises(ValueError, match="b.jsonl:2"):
        load_stories(str(broken))
    other = tmp_path / "s.parquet"
    other.write_text("x")
    with pytest.raises(ValueError, match="unsupported file type"):
        load_stories(str(other))


def test_cut_story_stops_at_the_sentence_boundary_closest_to_the_word_budget():
    sentences = [" ".join(["w"] * n) + "." for n in (90, 80, 50, 40)]
    story = " ".join(sentences)
    # cumulative words 90, 170, 220, 260: 220 is 20 from 200, 170 is 30 from it
    assert cut_story(story) == split_sentences(story)[:3]
    assert cut_story("Short. Story.") == ["Short.", "Story."]


def test_writing_prompts_row_prompt_first_tags_and_newline_markers_removed():
    story = "It was dark . <newline> <newline> The ship landed . " + "More words here . " * 80
    text = writing_prompts_text("[ WP ] Aliens land on Earth .", story)
    lines = text.split("\n")
    assert lines[0] == "Aliens land on Earth ."
    assert lines[1:3] == ["It was dark .", "The ship landed ."]
    assert 190 <= sum(len(line.split()) for line in lines[1:]) <= 210
    assert writing_prompts_text("[ WP ] Aliens.", 5) is None and writing_prompts_text(3, story) is None


def test_writing_prompts_row_without_a_prompt_opens_with_its_first_sentence():
    story = "It was dark . <newline> The ship landed . " + "More words here . " * 80
    for prompt in (None, "", "  "):
        lines = writing_prompts_text(prompt, story).split("\n")
        assert lines[:2] == ["It was dark .", "The ship landed ."]
        assert 190 <= sum(len(line.split()) for line in lines) <= 210


def test_writing_prompts_layout_is_detected_from_the_columns(tmp_path):
    path = tmp_path / "wp.jsonl"
    path.write_text(json.dumps({"prompt": "[WP] [ EU ] A test prompt.", "story": "One. <newline> Two."}))
    assert list(load_stories(str(path))["text"]) == ["A test prompt.\nOne.\nTwo."]


LONG_STORY = " ".join(f"Sentence {i} has " + " ".join(["word"] * (5 + i % 17)) + " ." for i in range(60))
# Lines without a full stop are sentences of their own only while the line breaks are there.
LINES_STORY = " <newline> ".join(f"Line {i} has " + " ".join(["word"] * (5 + i % 17)) for i in range(60))


@pytest.mark.parametrize("story", [LONG_STORY, LINES_STORY], ids=["sentences", "lines"])
@pytest.mark.parametrize("prompt", ["[ WP ] Aliens land .", None])
def test_segments_rebuild_the_whole_story_in_order_the_first_as_unions_text(prompt, story):
    segments = writing_prompts_segments(prompt, story)
    assert segments[0] == writing_prompts_text(prompt, story)
    later = [line for segment in segments[1:] for line in segment.split("\n")]
    head = segments[0].split("\n")[1 if prompt else 0 :]
    assert head + later == split_sentences(story.replace(" <newline> ", "\n"))
    assert all(180 <= len(segment.split()) <= 220 for segment in segments[1:-1])
    assert writing_prompts_segments(prompt, story, max_segments=2) == segments[:2]
    assert writing_prompts_segments(prompt, story, max_segments=1) == segments[:1]


def test_wp_rows_become_several_texts_with_segments_and_one_without(tmp_path):
    path = tmp_path / "wp.jsonl"
    rows = [{"prompt": "A prompt .", "story": LONG_STORY}, {"prompt": None, "story": "Ken ran . He fell ."}]
    path.write_text("\n".join(json.dumps(row) for row in rows))
    assert len(load_stories(str(path))) == 2
    texts = list(load_stories(str(path), segments=3)["text"])
    assert texts == writing_prompts_segments("A prompt .", LONG_STORY, max_segments=3) + [
        "Ken ran .\nHe fell ."
    ]
    with pytest.raises(ValueError, match="segments must be a positive integer"):
        load_stories(str(path), segments=0)


def test_hub_ids_go_through_datasets_load_dataset(monkeypatch):
    calls = {}

    def fake_load_dataset(name, split, revision):
        calls.update(name=name, split=split, revision=revision)
        return datasets.Dataset.from_dict(
            {"prompt": ["[ WP ] A prompt."], "story": ["Ken ran. He fell. He cried."]}
        )

    monkeypatch.setattr(corpora.datasets, "load_dataset", fake_load_dataset)
    ds = load_stories(corpora.WRITING_PROMPTS_HUB_ID, split="validation")
    assert calls == {"name": "euclaise/writingprompts", "split": "validation", "revision": None}
    assert ds.column_names == ["text"] and list(ds["text"]) == ["A prompt.\nKen ran.\nHe fell.\nHe cried."]
    segmented = load_stories(corpora.WRITING_PROMPTS_HUB_ID, split="validation", segments=2)
    assert list(segmented["text"]) == writing_prompts_segments(
        "[ WP ] A prompt.", "Ken ran. He fell. He cried."
    )


def test_a_utf16_file_with_its_mark_is_read_as_text(tmp_path):
    path = tmp_path / "stories.txt"
    path.write_bytes("Kelly went home. She slept.\nTom ran.\n".encode("utf-16"))
    assert list(load_stories(str(path))["text"]) == ["Kelly went home. She slept.", "Tom ran."]


def test_a_utf16_file_without_its_mark_is_named_as_such(tmp_path):
    path = tmp_path / "stories.txt"
    path.write_bytes("Kelly went home. She slept.\n".encode("utf-16-le"))
    with pytest.raises(ValueError, match=r"looks like UTF-16 text without a byte-order mark"):
        load_stories(str(path))


def test_a_top_level_json_object_is_named_not_read_as_rows(tmp_path):
    path = tmp_path / "stories.json"
    path.write_text(json.dumps({"data": [{"text": "A story."}], "version": 1}, indent=2))
    with pytest.raises(
        ValueError, match=r"holds one JSON object \(keys \['data', 'version'\]\), not stories"
    ):
        load_stories(str(path))
