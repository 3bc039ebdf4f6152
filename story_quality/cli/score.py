"""``story-quality score``: score a file of stories with union or gruen, on one process or many.

    story-quality score --metric union --input stories.txt --output scores.jsonl
    torchrun --nproc_per_node 2 -m story_quality score --metric union --input stories.txt --output scores.jsonl

On GPUs ``accelerate launch --multi_gpu --num_processes 2 -m story_quality score ...`` works too;
``accelerate launch --cpu`` starts one process whatever ``--num_processes`` says (refused when
asked for more). The rows are cut into chunks; each process scores whole chunks in turn and
process 0 appends them to the output in input order, so N processes write the one-process file,
and a run cut short is completed by running the same command again. Before any model loads,
``--output`` is checked by ``story_quality.score_file``: never an input, never a file this
command did not write, one run at a time, resumed only for the same input text (each row
carries a hash of its text) and the same metric and setting (the first row and the closing
summary carry the metric's signature).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import pathlib
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from story_quality import input_files
from story_quality.cli.errors import ProcessZeroError, UsageError
from story_quality.options import add_flags, given_flags, other_metrics_flags
from story_quality.process_group import leave_process_group, process_group_open
from story_quality.registry import METRICS, REGISTRY, option_specs
from story_quality.score_file import rows as file_rows
from story_quality.score_file.claim import claim_output
from story_quality.score_file.reading import ScoreFile
from story_quality.signature import Signature
from story_quality.text_checks import has_word, is_blank

CHUNK = 512
# What the flags' help says of a default where the command's differs from compute()'s.
CLI_DEFAULTS = {"device": "the process's accelerator, else cpu"}


@dataclass
class Row:
    index: int
    line: int
    text: Any
    problem: str | None = None


def read_rows(path: pathlib.Path, text_column: str) -> list[Row]:
    """Every input row with the line it starts on; a row that cannot be scored records why."""
    suffix = path.suffix.lower()
    if suffix not in input_files.SCORE_INPUT_SUFFIXES:
        raise UsageError(
            f"--input {path}: unsupported file type; use one of {', '.join(input_files.SCORE_INPUT_SUFFIXES)}"
        )
    try:
        records = input_files.read_records(path)
    except FileNotFoundError:
        raise UsageError(f"--input {path}: no such file") from None
    if suffix == ".csv" and text_column not in records.columns:
        raise UsageError(f"{path}: no {text_column!r} column (columns: {records.columns}); see --text-column")
    column = "text" if suffix == ".txt" else text_column  # a .txt line is the text
    rows: list[Row] = []
    for record, line in zip(records.rows, records.lines, strict=True):
        if column not in record:
            raise UsageError(f"{path}:{line}: no {text_column!r} field (--text-column names the text)")
        rows.append(Row(len(rows), line, record[column]))
    if not rows:
        raise UsageError(f"--input {path} holds no rows to score.")
    for row in rows:
        if not isinstance(row.text, str):
            row.problem = f"not text ({type(row.text).__name__})"
        elif is_blank(row.text):
            row.problem = "empty"
        elif not has_word(row.text):  # punctuation or emoji only: neither metric reads a word of it
            row.problem = "no word (no letter or digit)"
    return rows


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``score`` command: files and rows, then one flag per metric option (from the option specs)."""
    score = commands.add_parser(
        "score",
        help="score every text of a file; one output row per input row",
        description="Score every text of --input with a metric and write one JSON row per input row to "
        "--output, in input order, with its index, line and scores. Rerun to complete a cut-short output.",
    )
    score.add_argument(
        "--metric",
        choices=METRICS,
        required=True,
        help=" or ".join(f"{entry.name} ({entry.about})" for entry in REGISTRY.values()),
    )
    score.add_argument(
        "--input", type=pathlib.Path, required=True, help=".txt (one text a line), .jsonl or .csv"
    )
    score.add_argument(
        "--output",
        type=pathlib.Path,
        required=True,
        help="the .jsonl file of scores: new, empty, or this command's earlier output of the same input "
        "(completed); any other file is refused. - writes the rows to standard output as they are "
        "scored (a run cut short is then run again whole)",
    )
    score.add_argument(
        "--text-column", default="text", help="field of .jsonl/.csv rows holding the text (text)"
    )
    score.add_argument(
        "--bad-rows",
        choices=["refuse", "skip"],
        default="refuse",
        help="rows with no text (empty, not a string, no letter or digit): refuse the file (default), or skip "
        "them with a row saying why",
    )
    score.add_argument(
        "--chunk-size",
        type=int,
        default=CHUNK,
        help=f"rows per scoring call ({CHUNK}): each process scores one chunk at a time and process 0 "
        "appends them in order, so N processes need N chunks to all have work",
    )
    metric_options = score.add_argument_group(
        "metric options", "what each metric's compute() takes, flag for keyword argument"
    )
    add_flags(metric_options, list(option_specs().values()), default_texts=CLI_DEFAULTS)
    return score


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Stop with a usage error when a flag of the other metric is given (one rule, from the option
    specs: union's --checkpoint with --metric gruen as any other), or --chunk-size is below 1."""
    if args.chunk_size < 1:
        parser.error(f"--chunk-size must be at least 1, got {args.chunk_size}")
    problem = other_metrics_flags(args, args.metric, option_specs())
    if problem:
        parser.error(problem)


def load_scorer(args: argparse.Namespace, device: str) -> Callable[[list[str]], dict[str, Any]]:
    """The metric's scorer, built once, as a function from texts to the metric's result."""
    import evaluate

    evaluate.logging.disable_progress_bar()  # the scorer's own bars: the command shows one
    entry = REGISTRY[args.metric]
    options = given_flags(args, entry.options) | {"device": device}
    building = {name: options.pop(name) for name in entry.scorer_options if name in options}
    scorer = entry.build_scorer(given_flags(args, entry.options, loading=True) | building)
    return lambda texts: scorer.score(texts, **options).as_dict()


def per_row(metric: str, result: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The metric's per-text lists as one dict per text."""
    rename = REGISTRY[metric].row_keys
    lists = {
        rename[key]: value
        for key, value in result.items()
        if isinstance(value, list) and len(value) == count and key in rename
    }
    return [{key: values[i] for key, values in lists.items()} for i in range(count)]


def launched_distributed() -> bool:
    """Whether a launcher (torchrun, ``accelerate launch --multi_gpu``, mpirun) started several processes."""
    from accelerate.utils import get_int_from_env

    sizes = ["WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"]
    return int(os.environ.get("LOCAL_RANK", -1)) != -1 or get_int_from_env(sizes, 1) > 1


def processes_on_cpu(device: str | None) -> bool:
    """Whether the processes score on the CPU, so their group must be formed there.

    Accelerate forms a CPU process group only when told (``PartialState(cpu=True)``): under
    torchrun on a machine without a GPU each process would otherwise be process 0 of 1 and
    score every row.
    """
    import torch
    from accelerate.utils import parse_flag_from_env

    if parse_flag_from_env("ACCELERATE_USE_CPU") or (device or "").startswith("cpu"):
        return True
    xpu = getattr(torch, "xpu", None)
    has_accelerator = torch.cuda.is_available() or (xpu is not None and xpu.is_available())
    return launched_distributed() and not has_accelerator


def refuse_a_lone_cpu_launch() -> None:
    """``accelerate launch --cpu --num_processes N`` starts one process (without mpirun): say so."""
    from accelerate.utils import parse_flag_from_env

    if (
        parse_flag_from_env("ACCELERATE_USE_CPU")
        and os.environ.get("MASTER_ADDR")
        and not launched_distributed()
    ):
        raise UsageError(
            "accelerate launch --cpu starts one process whatever --num_processes says (more need mpirun and "
            "--mpirun_hostfile). For N processes on CPUs run `torchrun --nproc_per_node N -m story_quality "
            "score ...`; for one, drop --num_processes (and unset MASTER_ADDR)."
        )


def on_main_process(state: Any, work: Callable[[], Any]) -> Any:
    """``work()`` on process 0, its result (or its error, raised everywhere) shared with every process."""
    from accelerate.utils import broadcast_object_list

    result, problem = None, None
    if state.is_main_process:
        try:
            result = work()
        except (ValueError, TypeError, OSError) as error:
            problem = str(error)
    if state.num_processes > 1:
        shared = [result, problem]
        broadcast_object_list(shared, from_process=0)
        result, problem = shared
    if problem is not None:
        raise UsageError(problem) if state.is_main_process else ProcessZeroError(problem)
    return result


def row_identity(row: Row) -> dict[str, Any]:
    """What an output row says of its input row: index, line and a hash of its text."""
    return file_rows.row_identity(row.index, row.line, row.text)


def existing_rows(args: argparse.Namespace, rows: list[Row]) -> ScoreFile:
    """What an earlier run of this command wrote to --output, checked against --input's text."""
    return ScoreFile.resumed(args.output, [row_identity(row) for row in rows], args.input)


def kept_signature(written: ScoreFile | None, signature: str) -> str:
    """The signature the output goes on with: this run's, or when it resumes a file, the file's own, which
    must be this run's but for the fp32 library (:meth:`Signature.as_compared`): a file carries one."""
    if written is None or not written.rows:
        return signature
    found = Signature.parse_or_none(written.signature) if written.signature is not None else None
    if found is None or found.as_compared() != Signature.parse(signature).as_compared():
        shown = written.signature if written.signature is not None else written.records[0].get("signature")
        raise UsageError(
            f"--output {written.path} was written with another metric or setting ({shown}); "
            f"this run is {signature}. Use another --output, or the same options as before."
        )
    return str(found)


def write_rows(
    args: argparse.Namespace, chunk: list[Row], scores: dict[int, dict], signature: str, total: int
) -> None:
    """Append one sealed row per input row of ``chunk`` (the first also records the signature and the
    ``total`` number of input rows, what a finished output shows); a score that is not a finite
    number is refused."""
    lines = []
    for row in chunk:
        record: dict[str, Any] = row_identity(row)
        if row.index == 0:
            record["signature"] = signature
            record[file_rows.INPUT_ROWS] = total
        if row.problem is not None:
            record["skipped"] = row.problem
        else:
            for key, value in scores[row.index].items():
                if isinstance(value, float) and not math.isfinite(value):
                    raise UsageError(
                        f"{args.input}:{row.line} (row {row.index + 1}): the metric gave {value} for {key}; "
                        "a score that is not a number is never written. Check the checkpoint's weights."
                    )
            record.update(scores[row.index])
        lines.append(file_rows.seal(record))
    with args.output.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))
        handle.flush()
        os.fsync(handle.fileno())
    if getattr(args, "to_stdout", False):  # --output -: the same rows, as they are written
        sys.stdout.write("".join(lines))
        sys.stdout.flush()


def score(args: argparse.Namespace) -> dict[str, Any]:
    from accelerate import PartialState

    refuse_a_lone_cpu_launch()
    state = PartialState(cpu=processes_on_cpu(args.device))
    rows = read_rows(args.input, args.text_column)
    bad = [row for row in rows if row.problem]
    if bad and args.bad_rows == "refuse":
        listed = "; ".join(f"line {row.line}: {row.problem}" for row in bad[:10])
        raise UsageError(
            f"{args.input}: {len(bad)} row(s) hold no text ({listed}{'; ...' if len(bad) > 10 else ''}). "
            "Fix them, or pass --bad-rows skip."
        )
    device = args.device or ("cpu" if state.device.type in ("cpu", "mps") else str(state.device))
    written: list[ScoreFile] = []  # the output resumed, once process zero has read it
    with contextlib.ExitStack() as claim:

        def prepare() -> int:
            claim.enter_context(claim_output(args.output, [args.input]))
            written.append(existing_rows(args, rows))
            return len(written[0].rows)

        start = on_main_process(state, prepare)  # before any model is loaded
        score_texts = load_scorer(args, device)
        signature = on_main_process(
            state, lambda: kept_signature(written[0] if written else None, score_texts([])["signature"])
        )
        counts = score_rows(args, state, rows, start, (score_texts, signature))
    return {
        "rows": len(rows),
        "skipped": len(bad),
        "resumed_from": start,
        "signature": signature,
        "counts": counts,
    }


def score_rows(
    args: argparse.Namespace,
    state: Any,
    rows: list[Row],
    start: int,
    scorer: tuple[Callable[[list[str]], dict[str, Any]], str],
) -> list[int]:
    """Score ``rows[start:]`` and append them in order; how many rows each process scored.

    The rows are cut into chunks of ``--chunk-size`` whatever the number of processes, and each
    chunk is scored by one call of the scorer: with N processes, process p scores chunk p of every N
    in a round, then process 0 appends the round. Every text meets the same batch-mates as on one
    process, so N processes write the one-process file byte for byte.
    """
    from accelerate.utils import gather_object
    from tqdm.auto import tqdm

    score_texts, signature = scorer
    if state.is_main_process and start:
        print(f"{args.output}: {start} of {len(rows)} rows already scored; scoring the rest", file=sys.stderr)
    bar = tqdm(total=len(rows), initial=start, desc=f"{args.metric} score", unit="text",
               disable=not state.is_main_process)  # fmt: skip
    chunks = [rows[first : first + args.chunk_size] for first in range(start, len(rows), args.chunk_size)]
    mine_total = 0
    for first in range(0, len(chunks), state.num_processes):
        round_chunks = chunks[first : first + state.num_processes]
        mine = round_chunks[state.process_index] if state.process_index < len(round_chunks) else []
        good = [row for row in mine if row.problem is None]
        scored = []
        if good:
            result = score_texts([row.text for row in good])
            scored = list(
                zip([row.index for row in good], per_row(args.metric, result, len(good)), strict=True)
            )
        mine_total += len(good)
        if state.num_processes > 1:
            scored = gather_object(scored)
        written = [row for chunk in round_chunks for row in chunk]
        on_main_process(state, lambda: write_rows(args, written, dict(scored), signature, len(rows)))  # noqa: B023
        bar.update(len(written))
    bar.close()
    return gather_object([mine_total]) if state.num_processes > 1 else [mine_total]


def summarise(args: argparse.Namespace, summary: dict[str, Any]) -> str:
    """The run's last line: the texts scored (read back from --output by the one reader of score
    files), their mean main score, and the rows each process scored."""
    key = REGISTRY[args.metric].row_keys.get("scores", args.metric)  # the row field of the main score
    written = ScoreFile.read(args.output)
    values = [row.score for row in written.scored_rows(key, "index") if row.score is not None]
    mean = sum(values) / len(values) if values else math.nan
    counts = summary["counts"]
    return (
        f"{len(values)} texts scored ({summary['skipped']} skipped), mean {key} {mean:.4f}; this run: "
        f"{' + '.join(map(str, counts))} rows on {len(counts)} process{'es' if len(counts) > 1 else ''}; "
        f"signature {summary['signature']}"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``story-quality score``: 0; a refusal raises (one line and 2 from
    :func:`story_quality.cli.errors.run_and_report`, printed by process 0 only)."""
    from accelerate import PartialState

    if str(args.output) == "-":  # rows to standard output, through a scratch file of this run
        with tempfile.TemporaryDirectory(prefix="story-quality-score-") as scratch:
            args.output, args.to_stdout = pathlib.Path(scratch) / "scores.jsonl", True
            return run(args)
    group_before = process_group_open()
    try:
        summary = score(args)
    finally:
        if not group_before and process_group_open():
            leave_process_group()
    if PartialState().is_main_process:
        print(summarise(args, summary), file=sys.stderr)
    return 0
