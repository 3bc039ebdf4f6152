"""How a training script was launched: the process count, the CPU flags a launch needs, and the
refusal of an ``accelerate launch`` that would train on one process what was asked of several."""

from __future__ import annotations

import os
import pathlib
import signal
import sys
from collections.abc import Sequence

import torch
from accelerate.utils import parse_flag_from_env

from story_quality.cli.errors import USAGE_STATUS, refusal_message


def launched_processes() -> int:
    """How many processes the launcher started (torchrun's, mpirun's or accelerate's WORLD_SIZE); 1 alone."""
    from accelerate.utils import get_int_from_env

    return get_int_from_env(["WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE"], 1)


def on_cpu_only() -> bool:
    """Whether training runs on CPUs: ``accelerate launch --cpu``, or no GPU on this machine."""
    return parse_flag_from_env("ACCELERATE_USE_CPU") or not torch.cuda.is_available()


def cpu_flags(argv: Sequence[str]) -> list[str]:
    """The flags a CPU run needs that the user did not give.

    ``--use_cpu true``: under ``accelerate launch --cpu`` on a GPU machine the Trainer would still put
    the batches on the GPU; under ``torchrun --nproc_per_node N`` on CPUs it is what makes the Trainer
    form the gloo process group (without it each process trains the whole run alone). And
    ``--dataloader_pin_memory false``: pinning needs an accelerator, and warns on every evaluation.
    """
    given = {arg.split("=")[0] for arg in argv}
    if not on_cpu_only():
        return []
    flags = []
    if "--use_cpu" not in given and (parse_flag_from_env("ACCELERATE_USE_CPU") or launched_processes() > 1):
        flags += ["--use_cpu", "true"]
    if "--dataloader_pin_memory" not in given:
        flags += ["--dataloader_pin_memory", "false"]
    return flags


def refuse_a_lone_launch(launcher: int | None = None) -> None:
    """Refuse ``accelerate launch --num_processes N`` (N > 1) that started one process: on a machine
    without GPUs, and with ``--cpu`` anywhere, accelerate's launcher starts N processes only through
    mpirun, and one process would train the whole run alone without a word. The refusal names the
    launch that does train on N CPU processes (torchrun).

    Accelerate's launcher sets ``ACCELERATE_USE_CPU`` (``False`` without ``--cpu``) and, for N > 1,
    ``MASTER_ADDR``; a launcher that did start N processes also sets ``WORLD_SIZE`` (or mpirun's size).
    Under accelerate's launcher (``launcher``: its process id, by default this process's parent) the
    refusal ends it in one line (:func:`end_the_launcher`); elsewhere it is raised as a ValueError.
    """
    if "ACCELERATE_USE_CPU" in os.environ and os.environ.get("MASTER_ADDR") and launched_processes() == 1:
        script = f"training/{pathlib.Path(sys.argv[0]).name}"  # the documented path, from a clone
        error = ValueError(
            "accelerate launch started one process although --num_processes asks for more (without GPUs, "
            "or with --cpu, its launcher starts several only through mpirun), so one process would train "
            f"the whole run alone. For N processes on CPUs run `torchrun --nproc_per_node N {script} ...` "
            "(several machines: add --nnodes, --node_rank, --master_addr); for one, drop --num_processes."
        )
        end_the_launcher(error, os.getppid() if launcher is None else launcher)
        raise error


def accelerate_launcher(pid: int) -> bool:
    """Whether process ``pid`` is accelerate's launcher, by its command line (Linux's ``/proc``; elsewhere: no)."""
    try:
        words = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    names = [pathlib.Path(word.decode(errors="replace")).name for word in words]
    return "launch" in names and any(name == "accelerate" or name.startswith("accelerate.") for name in names)


def end_the_launcher(error: ValueError, launcher: int) -> None:
    """Stop with ``error`` in one line and no traceback where ``launcher`` is accelerate's launcher.

    That launcher answers a process that fails with a traceback of its own that repeats the
    process's last lines. So the line goes to the launcher's own standard error, the launcher is
    sent SIGTERM (on which it stops its child and exits quietly, status 143), and this process
    exits with status 2. Returns where ``launcher`` is another process or cannot be reached.
    """
    if not accelerate_launcher(launcher):
        return
    line = f"{pathlib.Path(sys.argv[0]).name}: error: {refusal_message(error)}\n"
    try:
        with open(f"/proc/{launcher}/fd/2", "a", encoding="utf-8") as stream:  # append: never truncate a log
            stream.write(line)
        os.kill(launcher, signal.SIGTERM)
    except OSError:
        return
    raise SystemExit(USAGE_STATUS)
