"""What run_setup adds for a launch: a CPU process group under torchrun, no pinned memory on CPUs,
a lone `accelerate launch --cpu` refused, and no alarming load report."""

from __future__ import annotations

import logging
import sys

import pytest
import tiny_models
import torch
from transformers import BertForMaskedLM, BertForSequenceClassification

from story_quality.training import run_setup

LAUNCH_VARIABLES = ("ACCELERATE_USE_CPU", "WORLD_SIZE", "MASTER_ADDR", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


@pytest.fixture
def cpu_machine(monkeypatch):
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    return monkeypatch


def test_torchrun_on_cpus_forms_the_process_group_and_pins_no_memory(cpu_machine):
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert run_setup.cpu_flags(["--output_dir", "o"]) == [
        "--use_cpu", "true", "--dataloader_pin_memory", "false",
    ]  # fmt: skip


def test_one_cpu_process_pins_no_memory_and_the_users_flags_win(cpu_machine):
    assert run_setup.cpu_flags([]) == ["--dataloader_pin_memory", "false"]
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert run_setup.cpu_flags(["--use_cpu=false", "--dataloader_pin_memory", "true"]) == []


def test_a_gpu_machine_gets_nothing_added(cpu_machine):
    cpu_machine.setattr(torch.cuda, "is_available", lambda: True)
    cpu_machine.setenv("WORLD_SIZE", "2")
    assert run_setup.cpu_flags([]) == []


@pytest.mark.parametrize("use_cpu", ["true", "False"])  # accelerate launch with and without --cpu
def test_accelerate_launch_of_several_processes_that_starts_one_is_refused_naming_torchrun(
    cpu_machine, use_cpu
):
    cpu_machine.setenv("ACCELERATE_USE_CPU", use_cpu)
    cpu_machine.setenv("MASTER_ADDR", "127.0.0.1")  # what --num_processes 2 sets, starting one process
    with pytest.raises(
        ValueError, match=r"accelerate launch started one process although --num_processes"
    ) as e:
        run_setup.refuse_a_lone_launch()
    assert "`torchrun --nproc_per_node N training/" in str(e.value)
    cpu_machine.setenv("WORLD_SIZE", "2")  # mpirun did start them
    run_setup.refuse_a_lone_launch()


def test_a_plain_run_and_torchrun_are_not_refused(cpu_machine):
    run_setup.refuse_a_lone_launch()  # python training/train_union.py: nothing set
    cpu_machine.setenv("MASTER_ADDR", "127.0.0.1")
    run_setup.refuse_a_lone_launch()  # MASTER_ADDR of the user's own, no accelerate launcher
    cpu_machine.setenv("ACCELERATE_USE_CPU", "False")
    cpu_machine.setenv("WORLD_SIZE", "2")
    run_setup.refuse_a_lone_launch()


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
