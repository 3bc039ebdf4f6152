"""train_union.py trains an encoder other than BERT (here a tiny MPNet) as its own classifier.

Such an encoder has no BERT masked-LM head, so the reconstruction term must be off: the run is
refused, naming the flag, before any pair is read, when it is not. With it off, the run writes an
``MPNetForSequenceClassification`` the ``union`` metric loads, whose scores are the plain
classifier's softmax, text by text. MPNet numbers its positions after the padding index, so of the
66 it declares 64 are read: a longer window is refused by name in training and scoring.
"""

from __future__ import annotations

import json
import shutil

import evaluate
import pytest
import tiny_models
import torch
from conftest import REPO
from safetensors.torch import load_file
from test_train_union import write_pairs
from transformers import (
    AutoConfig,
    MPNetConfig,
    MPNetForMaskedLM,
    MPNetForSequenceClassification,
    MPNetTokenizer,
)

from story_quality.training import train_union
from story_quality.training.union_model import export_trainer_checkpoint
from story_quality.union.normalization import CONFIG_KEY, ROC_STORIES

MAX_LENGTH = 48
MPNET_SPECIAL = ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"]


@pytest.fixture(scope="module")
def mpnet_start(tmp_path_factory):
    """A tiny MPNet with its masked-LM head (as a pretrained encoder comes), its tokenizer, pairs."""
    root = tmp_path_factory.mktemp("union-mpnet")
    pieces = MPNET_SPECIAL + [p for p in tiny_models.vocabulary() if not p.startswith("[")]
    tokenizer = MPNetTokenizer(
        vocab={p: i for i, p in enumerate(pieces)}, do_lower_case=True, unk_token="[UNK]"
    )
    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=66,
        pad_token_id=tokenizer.pad_token_id,
    )
    MPNetForMaskedLM(config).save_pretrained(root / "base")
    tokenizer.save_pretrained(root / "base")
    write_pairs(root / "pairs.jsonl", 12, seed=5)
    return root


def arguments(root, output, weight: str) -> list[str]:
    return [
        "--model_name_or_path", str(root / "base"), "--dataset", str(root / "pairs.jsonl"),
        "--output_dir", str(output), "--max_length", str(MAX_LENGTH), "--validation_fraction", "0",
        "--reconstruction_weight", weight, "--max_steps", "3", "--per_device_train_batch_size", "4",
        "--learning_rate", "1e-3", "--save_strategy", "steps", "--save_steps", "3", "--eval_strategy", "no",
        "--report_to", "none",
        "--use_cpu", "true", "--disable_tqdm", "true", "--dataloader_pin_memory", "false",
    ]  # fmt: skip


def test_reconstruction_with_an_encoder_without_bert_head_is_refused_before_reading_pairs(
    mpnet_start, tmp_path
):
    args = arguments(mpnet_start, tmp_path / "run", "0.1")
    (tmp_path / "unreadable-pairs.jsonl").write_text("not pairs\n")  # exists, so only reading it would fail
    args[args.index("--dataset") + 1] = str(tmp_path / "unreadable-pairs.jsonl")
    with pytest.raises(ValueError, match=r"--reconstruction_weight 0\.1 needs a BERT encoder.*'mpnet'"):
        train_union.main(args)
    assert not (tmp_path / "run").exists()


def test_a_window_beyond_the_positions_mpnet_reads_is_refused_before_reading_pairs(mpnet_start, tmp_path):
    args = arguments(mpnet_start, tmp_path / "run", "0")
    (tmp_path / "unreadable-pairs.jsonl").write_text("not pairs\n")  # exists, so only reading it would fail
    args[args.index("--dataset") + 1] = str(tmp_path / "unreadable-pairs.jsonl")
    args[args.index("--max_length") + 1] = "65"  # within the 66 declared, past the 64 read
    with pytest.raises(ValueError, match=r"--max_length 65 exceeds the 64 positions of .*pass at most 64"):
        train_union.main(args)
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def mpnet_run(mpnet_start):
    output = mpnet_start / "run"
    train_union.main(arguments(mpnet_start, output, "0"))
    return output


def test_an_mpnet_trains_as_the_classifier_the_metric_loads(mpnet_start, mpnet_run):
    output = mpnet_run
    assert AutoConfig.from_pretrained(output).architectures == ["MPNetForSequenceClassification"]
    classifier = MPNetForSequenceClassification.from_pretrained(output).eval()
    assert getattr(classifier.config, CONFIG_KEY) == ROC_STORIES.to_dict()
    assert classifier.config.id2label == {0: "perturbed", 1: "human"}
    start = MPNetForMaskedLM.from_pretrained(mpnet_start / "base")
    moved = (
        classifier.mpnet.encoder.layer[0].attention.attn.q.weight
        - start.mpnet.encoder.layer[0].attention.attn.q.weight
    )
    assert moved.abs().max() > 1e-6  # the encoder trained, not only a head on frozen features

    rows = [json.loads(line) for line in (mpnet_start / "pairs.jsonl").read_text().splitlines()][:6]
    texts = [row["text"] for row in rows]
    union = evaluate.load(str(REPO / "metrics" / "union"), str(output))
    scores = union.compute(predictions=texts)["scores"]
    tokenizer = union.scorer.tokenizer
    expected = []
    with torch.no_grad():
        for text in texts:
            encoded = tokenizer(
                ROC_STORIES(text), truncation=True, max_length=MAX_LENGTH, return_tensors="pt"
            )
            expected.append(torch.softmax(classifier(**encoded).logits[0], -1)[1].item())
    assert scores == pytest.approx(expected, abs=1e-5)
    assert len(set(round(s, 6) for s in scores)) > 1


def test_its_kept_checkpoint_exports_as_the_classifier_the_run_published(mpnet_run, tmp_path):
    exported = export_trainer_checkpoint(mpnet_run / "checkpoint-3", tmp_path / "e", ROC_STORIES)
    final, mine = load_file(mpnet_run / "model.safetensors"), load_file(exported / "model.safetensors")
    assert sorted(mine) == sorted(final)
    assert all(torch.equal(mine[k], final[k]) for k in final)
    config = json.loads((exported / "config.json").read_text())
    assert config[CONFIG_KEY] == ROC_STORIES.to_dict()
    assert config["architectures"] == ["MPNetForSequenceClassification"]


def test_the_metric_reads_an_mpnet_up_to_the_positions_it_has(mpnet_run, tmp_path):
    # The run's tokenizer records its 48-piece window; without it, the positions are the limit.
    shutil.copytree(mpnet_run, tmp_path / "c", ignore=shutil.ignore_patterns("checkpoint-*"))
    config = json.loads((tmp_path / "c" / "tokenizer_config.json").read_text())
    del config["model_max_length"]
    (tmp_path / "c" / "tokenizer_config.json").write_text(json.dumps(config))
    union = evaluate.load(str(REPO / "metrics" / "union"), str(tmp_path / "c"))
    long_story = " ".join(["the man went to the store and bought some milk ."] * 20)
    with pytest.raises(ValueError, match=r"max_length must be at most the model's window of 64 word pieces"):
        union.compute(predictions=[long_story], max_length=65)
    [whole] = union.compute(predictions=[long_story], max_length=64)["scores"]
    assert 0.0 < whole < 1.0
