"""The story LM's continuations of a corpus's stories: ``export`` and ``generate``.

``export`` writes an LM's texts per fold and the stories to continue (one target per story of
the corpus, with its domain and fold) into a work folder; ``generate`` trains one LM per fold
(:mod:`.story_lm`) and writes two samples per target, each continued by an LM that never read
its story. Folds: the WritingPrompts stories come in two halves or more (``--wp-fold``), each
continued by an LM trained on the other halves and on the ROC stories of ``--roc`` (which must
hold none of the corpus's ROC stories); the corpus's ROC stories are shared between the LMs by
``story_index``.
"""

from __future__ import annotations

import collections
import hashlib
import json
import pathlib
import random
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from story_quality.training.negatives.story_lm import (
    LMOptions,
    SamplingOptions,
    build_vocabulary,
    continue_stories,
    text_sha256,
    train_lm,
)
from story_quality.training.output_folders import (
    OutputKind,
    check_output_folder,
    probe_writable,
    refuse_input_as_output,
    written_whole,
    written_whole_file,
)
from story_quality.union.normalization import ABBREVIATIONS, SENTENCE_STOPS

# A ROC story has five sentences of about 45 words (at most 71 in ROCStories); a text in no
# --wp-fold that is longer is a WritingPrompts text whose fold was left out, never a ROC story.
ROC_MAX_SENTENCES = 7
ROC_MAX_WORDS = 120
TARGETS = "targets.jsonl"
TARGET_KEYS = ("story_index", "domain", "fold", "text")
# export's work folder: the LM's texts and the targets, nothing else.
WORK = OutputKind(
    "export", "an export's work folder", TARGETS, frozenset({"lm_roc.txt"}), re.compile(r"lm_wp_\d+\.txt")
)


def _human_texts(folder: pathlib.Path, option: str) -> list[str]:
    corpus = load_corpus(folder, option)
    return [text for text, label in zip(corpus["text"], corpus["label"], strict=True) if label == 1]


def load_corpus(folder: pathlib.Path, option: str) -> Any:
    """A corpus saved by ``datasets.save_to_disk``; a missing or other folder is named."""
    import datasets

    if not (folder / "dataset_info.json").is_file() and not (folder / "state.json").is_file():
        raise FileNotFoundError(
            f"{option} {folder}: not a corpus saved by build_union_data.py (no dataset_info.json)."
        )
    state = folder / "state.json"
    if state.is_file() and json.loads(state.read_text(encoding="utf-8")).get("_data_files") == []:
        raise ValueError(f"{option} {folder}: the saved corpus holds no rows.")  # datasets cannot load it
    return datasets.load_from_disk(str(folder))


def export(
    corpus_dir: pathlib.Path,
    roc_dir: pathlib.Path,
    wp_fold_dirs: Sequence[pathlib.Path],
    out: pathlib.Path,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write ``lm_roc.txt``, ``lm_wp_<fold>.txt`` and ``targets.jsonl`` (one line per story of the
    corpus: ``story_index``, ``domain``, ``fold``, ``text``, ``story_sha256``) into ``out``, a new
    folder or (with ``overwrite``) an earlier export's, replaced whole.

    A story in no ``--wp-fold`` is taken for a ROC story only if it is shaped like one (at most
    ``ROC_MAX_SENTENCES`` sentences and ``ROC_MAX_WORDS`` words); a longer one is a WritingPrompts
    text whose fold was not given, and is refused, naming it.
    """
    if len(wp_fold_dirs) < 2:
        raise ValueError(
            "--wp-fold: give two folds (or more), each continued by an LM trained on the others."
        )
    check_output_folder(out, WORK, overwrite, inputs=[corpus_dir, roc_dir, *wp_fold_dirs], option="--out")
    probe_writable(out, "--out")
    roc = _human_texts(roc_dir, "--roc")
    folds = [_human_texts(folder, "--wp-fold") for folder in wp_fold_dirs]
    targets, counts = export_targets(load_corpus(corpus_dir, "corpus"), corpus_dir, (roc_dir, roc), folds)
    with written_whole(out) as scratch:
        (scratch / "lm_roc.txt").write_text("".join(text + "\n" for text in roc), encoding="utf-8")
        for number, texts in enumerate(folds):
            (scratch / f"lm_wp_{number}.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        (scratch / TARGETS).write_text("".join(json.dumps(t) + "\n" for t in targets), encoding="utf-8")
    return {"lm_texts": {"roc": len(roc), "wp_folds": [len(f) for f in folds]}, "targets": dict(counts)}


def export_targets(
    corpus: Any,
    corpus_dir: pathlib.Path,
    roc: tuple[pathlib.Path, Sequence[str]],
    folds: Sequence[Sequence[str]],
) -> tuple[list[dict[str, Any]], collections.Counter[str]]:
    """One target per story of ``corpus`` (its human rows) with its domain and fold, and the count per domain."""
    roc_dir, roc_known = roc[0], set(roc[1])
    fold_of = {text: number for number, texts in enumerate(folds) for text in texts}
    counts: collections.Counter[str] = collections.Counter()
    targets, seen = [], set()
    for row in corpus:
        index, text = row["story_index"], row["text"]
        if row["label"] != 1 or index in seen:
            continue
        seen.add(index)
        if text in roc_known:
            raise ValueError(
                f"story {index} of {corpus_dir} is also in --roc {roc_dir}: the LM would have read it."
            )
        if text in fold_of:
            domain, fold = "wp", fold_of[text]
        else:
            refuse_unlike_roc(text.split(), index, corpus_dir)
            domain, fold = "roc", index % len(folds)
        counts[domain] += 1
        targets.append(
            {
                "story_index": index,
                "domain": domain,
                "fold": fold,
                "text": text,
                "story_sha256": text_sha256(text),
            }
        )
    return targets, counts


def refuse_unlike_roc(words: Sequence[str], index: int, corpus_dir: pathlib.Path) -> None:
    """Fail when a story in no --wp-fold is longer than a ROC story: its WritingPrompts fold is missing."""
    # the full stop of an abbreviation ("mr . [MALE]") ends no sentence
    sentences = sum(
        word in SENTENCE_STOPS and not (word == "." and i and words[i - 1] in ABBREVIATIONS)
        for i, word in enumerate(words)
    )
    if sentences > ROC_MAX_SENTENCES or len(words) > ROC_MAX_WORDS:
        raise ValueError(
            f"story {index} of {corpus_dir} is in no --wp-fold, but with {sentences} sentences and {len(words)} "
            f"words it is no ROC story (at most {ROC_MAX_SENTENCES} and {ROC_MAX_WORDS}): give every "
            "WritingPrompts fold of the corpus with --wp-fold."
        )


def read_json_lines(
    path: pathlib.Path, keys: Sequence[str], expected: str
) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of a JSON-lines file whose records hold ``keys``; errors name the file and line."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file; expected {expected}.")
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                record = json.loads(line)
            except ValueError:
                raise ValueError(f"{path}, line {number}: not a JSON object; expected {expected}.") from None
            missing = [key for key in keys if not isinstance(record, dict) or key not in record]
            if missing:
                raise ValueError(f"{path}, line {number}: no {', '.join(missing)}; expected {expected}.")
            records.append((number, record))
    return records


def read_work(work: pathlib.Path) -> tuple[list[str], list[list[str]], list[dict[str, Any]]]:
    """The LM's ROC texts, its WritingPrompts folds and the targets of an export's work folder, checked."""
    if not (work / "lm_roc.txt").is_file():
        raise FileNotFoundError(
            f"{work}: no lm_roc.txt; give the --out folder of generated_negatives.py export."
        )
    folds = sorted(work.glob("lm_wp_*.txt"))
    if len(folds) < 2:
        raise FileNotFoundError(f"{work}: {len(folds)} lm_wp_*.txt folds, export writes two or more.")
    targets = read_json_lines(work / TARGETS, TARGET_KEYS, "the targets export wrote")
    for number, target in targets:
        if "copy" in target:
            raise ValueError(
                f"{work / TARGETS}, line {number}: a sample generate wrote, not a target; rerun export."
            )
    roc = (work / "lm_roc.txt").read_text(encoding="utf-8").splitlines()
    wp = [path.read_text(encoding="utf-8").splitlines() for path in folds]
    return roc, wp, [target for _, target in targets]


def record_path(out: pathlib.Path) -> pathlib.Path:
    """Where generate's record of ``out`` (its LMs, and the samples' sha256) is written."""
    return out.with_name(out.stem + "_record.json")


def check_samples_output(work: pathlib.Path, out: pathlib.Path, overwrite: bool) -> None:
    """Fail before any work unless ``out`` is new or (with ``overwrite``) samples generate wrote.

    Never an input of the run (the work folder's texts and targets); never a file whose record
    (``<out>_record.json``) does not hold its sha256, i.e. a file generate did not write.
    """
    inputs = [work, work / "lm_roc.txt", work / TARGETS, *work.glob("lm_wp_*.txt")]
    for path in (out, record_path(out)):
        refuse_input_as_output(path, inputs, "--out")
        if path.is_dir():
            raise FileExistsError(f"--out {out}: {path} is a folder; give a file name.")
    if not out.exists() and not record_path(out).exists():
        probe_writable(out.parent, "--out")
        return
    record = record_path(out)
    try:
        recorded = json.loads(record.read_text(encoding="utf-8")).get("samples_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if not out.is_file() or recorded != hashlib.sha256(out.read_bytes()).hexdigest():
        raise FileExistsError(
            f"--out {out} (or {record.name}) exists and was not written by generate; it is never replaced. "
            "Choose another file."
        )
    if not overwrite:
        raise FileExistsError(f"--out {out} already holds samples; pass --overwrite to replace them.")


def generate(
    work: pathlib.Path,
    out: pathlib.Path,
    vocabulary_size: int,
    lm: LMOptions,
    sampling: SamplingOptions,
    batch_size: int,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Train one LM per fold and write two samples per target story to ``out`` (JSON lines), and
    ``<out>_record.json`` (the LMs' losses, the samples' sha256); both written whole. Each fold's
    samples wait in ``<out>_fold<N>.partial.json`` until every fold is done, so a run cut short goes
    on from its last finished fold when run again with the same work folder and settings."""
    check_samples_output(work, out, overwrite)
    roc, wp, targets = read_work(work)
    vocabulary = build_vocabulary(roc + [text for fold in wp for text in fold], vocabulary_size)
    sampling = replace(
        sampling, sentence_end_ids=frozenset(vocabulary[w] for w in SENTENCE_STOPS if w in vocabulary)
    )
    record: dict[str, Any] = {"vocabulary": len(vocabulary), "folds": []}
    key = settings_key(work, vocabulary_size, lm, sampling, batch_size)
    resumed = [read_fold(out, number, key) for number in range(len(wp))]  # before any training: may refuse
    folds = []
    for number, done in enumerate(resumed):
        if done is None:
            texts = [("roc", t) for t in roc] + [
                ("wp", t) for other, fold in enumerate(wp) if other != number for t in fold
            ]
            print(f"fold {number}: an LM on {len(texts)} texts", flush=True)
            done = fold_samples(
                train_lm(texts, vocabulary, lm), number, targets, vocabulary, sampling, batch_size
            )
            with written_whole_file(fold_path(out, number)) as scratch:  # a rerun goes on from here
                scratch.write_text(json.dumps({"settings": key, **done}), encoding="utf-8")
        else:
            print(
                f"fold {number}: its samples from an interrupted run ({fold_path(out, number).name})",
                flush=True,
            )
        record["folds"].append(done["trained"])
        folds.append(done["samples"])
    with written_whole_file(out) as scratch, open(scratch, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(s) + "\n" for samples in folds for s in samples)
    record["samples_sha256"] = hashlib.sha256(out.read_bytes()).hexdigest()
    with written_whole_file(record_path(out)) as scratch:
        scratch.write_text(json.dumps(record, indent=1), encoding="utf-8")
    for number in range(len(wp)):
        fold_path(out, number).unlink(missing_ok=True)
    return record


def fold_samples(
    trained_lm: tuple[Any, dict[str, Any]],
    number: int,
    targets: Sequence[dict[str, Any]],
    vocabulary: dict[str, int],
    sampling: SamplingOptions,
    batch_size: int,
) -> dict[str, Any]:
    """One fold's LM record and its samples of the fold's targets, ROC stories first; two shown."""
    model, trained = trained_lm
    rng = random.Random(number)
    samples: list[dict[str, Any]] = []
    for domain in ("roc", "wp"):
        mine = [t for t in targets if t["fold"] == number and t["domain"] == domain]
        started = time.time()
        drawn = continue_stories(model, mine, vocabulary, sampling, batch_size) if mine else []
        print(f"  {domain}: {len(drawn)} samples, {time.time() - started:.0f} s", flush=True)
        for shown in rng.sample(drawn, min(2, len(drawn))):
            print(f"  e.g. (blocked={shown['blocked']}) {shown['text'][:400]}", flush=True)
        samples += drawn
    return {"trained": trained, "samples": samples}


def fold_path(out: pathlib.Path, number: int) -> pathlib.Path:
    """Where generate keeps fold ``number``'s samples until every fold is done."""
    return out.with_name(f"{out.stem}_fold{number}.partial.json")


def settings_key(
    work: pathlib.Path, vocabulary_size: int, lm: LMOptions, sampling: SamplingOptions, batch_size: int
) -> str:
    """The sha256 of what a fold's samples depend on: the work folder's files and every setting but the device."""
    digest = hashlib.sha256()
    for path in sorted([work / "lm_roc.txt", work / TARGETS, *work.glob("lm_wp_*.txt")]):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    lm_settings = {k: v for k, v in asdict(lm).items() if k != "device"}
    # sentence ends follow from the vocabulary, which the work files and its size fix
    draws = {k: v for k, v in asdict(sampling).items() if k not in ("device", "sentence_end_ids")}
    settings = {"vocabulary": vocabulary_size, "lm": lm_settings, "sampling": draws, "batch": batch_size}
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()


def read_fold(out: pathlib.Path, number: int, key: str) -> dict[str, Any] | None:
    """An interrupted run's samples of fold ``number`` made with the same settings, or None."""
    path = fold_path(out, number)
    if not path.is_file():
        return None
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        done = None
    if not isinstance(done, dict) or not {"settings", "trained", "samples"} <= done.keys():
        raise FileExistsError(
            f"--out {out}: {path.name} beside it was not written by generate, which keeps a fold's samples "
            "there; move it or choose another --out."
        )
    return done if done["settings"] == key else None  # another run's settings: made again
