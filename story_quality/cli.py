"""``story-quality score``: score a file of stories with union or gruen, on one process or many.

    story-quality score --metric union --input stories.txt --output scores.jsonl
    accelerate launch --num_processes 2 -m story_quality score --metric union --input stories.txt --output scores.jsonl

Rows are split across processes by Accelerate and gathered back; process 0 appends them to the
output in input order as each chunk finishes, so a run cut short is completed by running the
same command again (only the missing rows are scored; a different checkpoint or setting is
refused). The first output row and the closing summary carry the metric's signature.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import pathlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from story_quality.validation import is_blank

METRICS = ("union", "gruen")
INPUT_SUFFIXES = (".txt", ".jsonl", ".csv")
CHUNK = 512
# The metric's per-text result lists, as the output rows name them.
ROW_KEYS = {
    "union": {"scores": "union"},
    "gruen": {key: key for key in ("gruen", "grammaticality", "redundancy", "focus", "coherence")},
}


@dataclass
class Row:
    index: int
    line: int
    text: Any
    problem: str | None = None


class UsageError(ValueError):
    """A bad file, row or option: printed as one line, exit status 2."""


def _read_text(path: pathlib.Path) -> str:
    from story_quality.training.corpora import read_text_file

    try:
        return read_text_file(path)
    except FileNotFoundError:
        raise UsageError(f"--input {path}: no such file") from None
    except ValueError as error:
        raise UsageError(str(error)) from None


def read_rows(path: pathlib.Path, text_column: str) -> list[Row]:
    """Every input row with its line number; a row that cannot be scored records why."""
    suffix = path.suffix.lower()
    if suffix not in INPUT_SUFFIXES:
        raise UsageError(f"--input {path}: unsupported file type; use one of {', '.join(INPUT_SUFFIXES)}")
    text = _read_text(path)
    rows: list[Row] = []
    if suffix == ".txt":
        for number, line in enumerate(text.splitlines(), 1):
            rows.append(Row(len(rows), number, line))
    elif suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise UsageError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(record, dict) or text_column not in record:
                raise UsageError(f"{path}:{number}: no {text_column!r} field (--text-column names the text)")
            rows.append(Row(len(rows), number, record[text_column]))
    else:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if text_column not in (reader.fieldnames or []):
            raise UsageError(
                f"{path}: no {text_column!r} column (columns: {reader.fieldnames}); see --text-column"
            )
        for record in reader:
            rows.append(Row(len(rows), reader.line_num, record[text_column]))
    for row in rows:
        if not isinstance(row.text, str):
            row.problem = f"not text ({type(row.text).__name__})"
        elif is_blank(row.text):
            row.problem = "empty"
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="story-quality",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser(
        "score",
        help="score every text of a file; one output row per input row",
        description="Score every text of --input with a metric and write one JSON row per input row to "
        "--output, in input order, with its index, line and scores. Rerun to complete a cut-short output.",
    )
    score.add_argument(
        "--metric", choices=METRICS, required=True, help="union (coherence) or gruen (quality)"
    )
    score.add_argument(
        "--input", type=pathlib.Path, required=True, help=".txt (one text a line), .jsonl or .csv"
    )
    score.add_argument("--output", type=pathlib.Path, required=True, help="the .jsonl file of scores")
    score.add_argument(
        "--text-column", default="text", help="field of .jsonl/.csv rows holding the text (text)"
    )
    score.add_argument(
        "--checkpoint",
        default="default",
        help="union: the config name (default, roc, wp), a Hub id (@revision pins it) or a folder",
    )
    score.add_argument("--max-length", type=int, help="union: the window in word pieces (the checkpoint's)")
    score.add_argument(
        "--long-stories",
        choices=["head", "windows"],
        help="union: read a story longer than the window by its head, or as consecutive windows whose "
        "scores are averaged (default: what the checkpoint records, else head; the shipped default reads the head)",
    )
    score.add_argument("--lm-model", help="gruen: masked LM (Hub id or folder)")
    score.add_argument("--cola-model", help="gruen: CoLA classifier (Hub id or folder)")
    score.add_argument("--sop-model", help="gruen: ALBERT sentence-order model, with --coherence")
    score.add_argument("--coherence", action="store_true", help="gruen: add the structure score")
    score.add_argument(
        "--lm-scoring", choices=["reference", "pll"], help="gruen: LM scoring mode (reference)"
    )
    score.add_argument("--batch-size", type=int, default=32, help="texts per forward pass (32)")
    score.add_argument(
        "--device", help="cpu, cuda, cuda:1 ... (default: the process's accelerator, else cpu)"
    )
    score.add_argument(
        "--bad-rows",
        choices=["refuse", "skip"],
        default="refuse",
        help="rows with no text (empty, not a string): refuse the file (default), or skip them with a "
        "row saying why",
    )
    score.add_argument("--chunk-size", type=int, default=CHUNK, help=f"rows scored between writes ({CHUNK})")
    args = parser.parse_args(argv)
    for name in ("batch_size", "chunk_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.metric == "gruen" and (args.max_length is not None or args.long_stories is not None):
        parser.error("--max-length and --long-stories are union options")
    if args.metric == "union" and any(
        [args.lm_model, args.cola_model, args.sop_model, args.coherence, args.lm_scoring]
    ):
        parser.error("--lm-model/--cola-model/--sop-model/--coherence/--lm-scoring are gruen options")
    return args


def metric_options(args: argparse.Namespace, device: str) -> dict[str, Any]:
    options: dict[str, Any] = {"batch_size": args.batch_size, "device": device}
    if args.metric == "union":
        for flag in ("max_length", "long_stories"):
            if getattr(args, flag) is not None:
                options[flag] = getattr(args, flag)
        return options
    for flag in ("lm_model", "cola_model", "sop_model", "lm_scoring"):
        if getattr(args, flag) is not None:
            options[flag] = getattr(args, flag)
    options["coherence"] = args.coherence
    return options


def load_metric(args: argparse.Namespace, process_index: int):
    import evaluate

    from story_quality import metric_path

    evaluate.logging.disable_progress_bar()
    experiment = f"story-quality-score-{os.getpid()}-{process_index}"
    if args.metric == "union":
        return evaluate.load(metric_path("union"), args.checkpoint, experiment_id=experiment)
    return evaluate.load(metric_path("gruen"), experiment_id=experiment)


def per_row(metric: str, result: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The metric's per-text lists as one dict per text."""
    rename = ROW_KEYS[metric]
    lists = {
        rename[key]: value
        for key, value in result.items()
        if isinstance(value, list) and len(value) == count and key in rename
    }
    return [{key: values[i] for key, values in lists.items()} for i in range(count)]


def resume_point(output: pathlib.Path, rows: list[Row], signature: str) -> int:
    """How many rows the output already holds (0 for a new file), after checking it belongs to this run."""
    if not output.exists() or output.stat().st_size == 0:
        return 0
    data = output.read_bytes()
    keep = data.rfind(b"\n") + 1  # a line cut short by a kill is dropped
    lines = data[:keep].decode("utf-8").splitlines()
    done = []
    for number, line in enumerate(lines, 1):
        try:
            done.append(json.loads(line))
        except json.JSONDecodeError:
            raise UsageError(
                f"--output {output}:{number} is not a JSON row; not an output of this command"
            ) from None
    if done and done[0].get("signature") != signature:
        raise UsageError(
            f"--output {output} was written with another metric or setting ({done[0].get('signature')}); "
            f"this run is {signature}. Use another --output, or the same options as before."
        )
    for position, record in enumerate(done):
        if (
            position >= len(rows)
            or record.get("index") != position
            or record.get("line") != rows[position].line
        ):
            raise UsageError(f"--output {output}, row {position + 1}: does not match --input; not its output")
    if keep != len(data):
        with output.open("r+b") as handle:
            handle.truncate(keep)
    return len(done)


def score(args: argparse.Namespace) -> dict[str, Any]:
    from accelerate import PartialState
    from accelerate.utils import gather_object
    from tqdm.auto import tqdm

    state = PartialState()
    rows = read_rows(args.input, args.text_column)
    bad = [row for row in rows if row.problem]
    if bad and args.bad_rows == "refuse":
        listed = "; ".join(f"line {row.line}: {row.problem}" for row in bad[:10])
        raise UsageError(
            f"{args.input}: {len(bad)} row(s) hold no text ({listed}{'; ...' if len(bad) > 10 else ''}). "
            "Fix them, or pass --bad-rows skip."
        )
    device = args.device or ("cpu" if state.device.type == "mps" else str(state.device))
    metric = load_metric(args, state.process_index)
    options = metric_options(args, device)
    signature = metric.compute(predictions=[], **options)["signature"]
    start = resume_point(args.output, rows, signature) if state.is_main_process else 0
    start = gather_object([start])[0] if state.num_processes > 1 else start
    if state.is_main_process and start:
        print(f"{args.output}: {start} of {len(rows)} rows already scored; scoring the rest", file=sys.stderr)
    bar = tqdm(
        total=len(rows),
        initial=start,
        desc=f"{args.metric} score",
        unit="text",
        disable=not state.is_main_process,
    )
    for chunk_start in range(start, len(rows), args.chunk_size):
        chunk = rows[chunk_start : chunk_start + args.chunk_size]
        good = [row for row in chunk if row.problem is None]
        with state.split_between_processes(good) as mine:
            result = metric.compute(predictions=[row.text for row in mine], **options)
            scored = list(
                zip([row.index for row in mine], per_row(args.metric, result, len(mine)), strict=True)
            )
        if state.num_processes > 1:
            scored = gather_object(scored)
        if state.is_main_process:
            by_index = dict(scored)
            with args.output.open("a", encoding="utf-8") as handle:
                for row in chunk:
                    record: dict[str, Any] = {"index": row.index, "line": row.line}
                    if row.index == 0:
                        record["signature"] = signature
                    record.update(by_index[row.index] if row.problem is None else {"skipped": row.problem})
                    handle.write(json.dumps(record) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        bar.update(len(chunk))
    bar.close()
    state.wait_for_everyone()
    return {"rows": len(rows), "skipped": len(bad), "resumed_from": start, "signature": signature}


def summarise(args: argparse.Namespace, summary: dict[str, Any]) -> str:
    key = "union" if args.metric == "union" else "gruen"
    values = []
    with args.output.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if key in record:
                values.append(record[key])
    mean = sum(values) / len(values) if values else math.nan
    return (
        f"{len(values)} texts scored ({summary['skipped']} skipped), mean {key} {mean:.4f}; "
        f"signature {summary['signature']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        summary = score(args)
    except (UsageError, ValueError, TypeError, OSError) as error:
        print(f"story-quality: error: {error}", file=sys.stderr)
        return 2
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(summarise(args, summary), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
