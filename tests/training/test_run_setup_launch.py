"""What run_setup adds for a launch: a CPU process group under torchrun, no pinned memory on CPUs,
a lone `accelerate launch --cpu` refused, and no alarming load report."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys

import pytest
import tiny_models
import torch
from transformers import BertForMaskedLM, BertForSequenceClassification

from story_quality.training import launches, run_setup

LAUNCH_VARIABLES = ("ACCELERATE_USE_CPU", "WORLD_SIZE", "MASTER_ADDR", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


@pytest.fixture
def cpu_machine(monkeypatch):
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    return monkeypatch


def test_torchrun_on_cpus_forms_the_process_group_and_pins_no_memory(cpu_machine):
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert launches.cpu_flags(["--output_dir", "o"]) == [
        "--use_cpu", "true", "--dataloader_pin_memory", "false",
    ]  # fmt: skip


def test_one_cpu_process_pins_no_memory_and_the_users_flags_win(cpu_machine):
    assert launches.cpu_flags([]) == ["--dataloader_pin_memory", "false"]
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert launches.cpu_flags(["--use_cpu=false", "--dataloader_pin_memory", "true"]) == []


def test_a_gpu_machine_gets_nothing_added(cpu_machine):
    cpu_machine.setattr(torch.cuda, "is_available", lambda: True)
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert launches.cpu_flags([]) == []


@pytest.mark.parametrize("use_cpu", ["true", "False"])  # accelerate launch with and without --cpu
def test_accelerate_launch_of_several_processes_that_starts_one_is_refused_naming_torchrun(
    cpu_machine, use_cpu
):
    cpu_machine.setenv("ACCELERATE_USE_CPU", use_cpu)
    cpu_machine.setenv("MASTER_ADDR", "127.0.0.1")  # what --num_processes 2 sets, starting one process
    with pytest.raises(
        ValueError, match=r"accelerate launch started one process although --num_processes"
    ) as e:
        launches.refuse_a_lone_launch()
    assert "`torchrun --nproc_per_node N training/" in str(e.value)
    cpu_machine.setenv("WORLD_SIZE", "2")  # mpirun did start them
    launches.refuse_a_lone_launch()


def a_process(*words: str) -> subprocess.Popen:
    """A process that waits, its command line ending in ``words``, its standard error a pipe."""
    waiting = "import sys, time; print('started', flush=True); time.sleep(60)"
    process = subprocess.Popen(
        [sys.executable, "-c", waiting, *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout.readline() == "started\n"  # its command line is its own from here on
    return process


def test_under_accelerates_launcher_the_refusal_is_one_line_and_the_launcher_stops_quietly(cpu_machine):
    """accelerate's launcher would wrap a failed process's last lines in a traceback of its own: the
    line goes to the launcher's standard error, and the launcher is stopped (called directly here,
    with a stand-in launcher, so no accelerate is spawned)."""
    cpu_machine.setenv("ACCELERATE_USE_CPU", "False")
    cpu_machine.setenv("MASTER_ADDR", "127.0.0.1")
    cpu_machine.setattr(sys, "argv", ["training/train_union.py"])
    launcher = a_process("accelerate", "launch", "--num_processes", "2")
    try:
        with pytest.raises(SystemExit) as stop:
            launches.refuse_a_lone_launch(launcher=launcher.pid)
        assert stop.value.code == 2
        assert launcher.wait(timeout=30) == -signal.SIGTERM
        lines = launcher.stderr.read().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "train_union.py: error: accelerate launch started one process although --num_processes"
        )
    finally:
        launcher.kill()
    other = a_process("torchrun", "launch")  # another parent: raised as any refusal, left running
    try:
        with pytest.raises(ValueError, match="accelerate launch started one process"):
            launches.refuse_a_lone_launch(launcher=other.pid)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_a_plain_run_and_torchrun_are_not_refused(cpu_machine):
    launches.refuse_a_lone_launch()  # python training/train_union.py: nothing set
    cpu_machine.setenv("MASTER_ADDR", "127.0.0.1")
    launches.refuse_a_lone_launch()  # MASTER_ADDR of the user's own, no accelerate launcher
    cpu_machine.setenv("ACCELERATE_USE_CPU", "False")
    cpu_machine.setenv("WORLD_SIZE", "2")
    launches.refuse_a_lone_launch()


@pytest.fixture
def transformers_stderr(capfd):
    """transformers' log handler keeps the stderr of its import (pytest's own capture, before this
    test's ``capfd``): point it at the test's stderr while the test runs. Only transformers' own plain
    StreamHandler moves: pytest (9.2 on) also hangs its capture handlers, StreamHandler subclasses,
    on this logger, which does not propagate, and they must keep their streams."""
    handlers = [h for h in logging.getLogger("transformers").handlers if type(h) is logging.StreamHandler]
    before = [handler.stream for handler in handlers]
    for handler in handlers:
        handler.setStream(sys.stderr)
    yield capfd
    for handler, stream in zip(handlers, before, strict=True):
        handler.setStream(stream)


def test_loading_an_encoder_into_a_classifier_prints_no_load_report(
    tmp_path, capfd, caplog, transformers_stderr
):
    BertForMaskedLM(tiny_models.bert_config(40)).save_pretrained(tmp_path / "encoder")
    with caplog.at_level(logging.INFO), run_setup.quiet_load_report(logging.getLogger("t"), "encoder"):
        BertForSequenceClassification.from_pretrained(tmp_path / "encoder", num_labels=2)
    assert "LOAD REPORT" not in "".join(capfd.readouterr()) + caplog.text
    assert "heads it lacks start fresh" in caplog.text
    caplog.clear()
    BertForSequenceClassification.from_pretrained(tmp_path / "encoder", num_labels=2)
    assert "LOAD REPORT" in "".join(capfd.readouterr()) + caplog.text  # what the context keeps quiet
