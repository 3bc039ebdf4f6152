"""The training speed paths: the reconstruction head only where the loss is weighted, and the
benchmark's FLOP count, against slow references (all positions; torch's FLOP counter)."""

from __future__ import annotations

import inspect

import pytest
import tiny_models
import torch
from torch.nn import functional as F
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import bench_train_union as bench
from story_quality.training import union_model
from story_quality.training.union_model import (
    IGNORE_INDEX,
    BertForUnionTraining,
    UnionDataCollator,
    encode_union_examples,
)

EXAMPLES = {
    "text": [
        "[MALE] went to the store . he bought a dog . the dog was happy .",
        "she ran home . she ran home . then she ate .",
        "the cat was sad . [FEMALE] found the cat a new home . the cat played .",
        "we go to school .",
    ],
    "original": [
        "[MALE] went to the store . he bought a dog . the dog was happy .",
        "she ran home . then she ate .",
        "the cat was sad . [FEMALE] found the cat a new home . the cat played .",
        "we go to school .",
    ],
    "context": ["[MALE] went to the store .", "she ran home .", "the cat was sad .", "we go to school ."],
    "label": [1, 0, 1, 1],
}
WEIGHT = 0.3


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_models.tokenizer(lowercase=True, model_max_length=64)


def make_model(tokenizer, weight: float = WEIGHT, attention: str = "sdpa") -> BertForUnionTraining:
    torch.manual_seed(0)
    config = tiny_models.bert_config(
        len(tokenizer), num_labels=2, id2label=tiny_models.UNION_LABELS, attn_implementation=attention
    )  # UNION's labels: train_union.py refuses a start classifier of another task
    return BertForUnionTraining(config, reconstruction_weight=weight).eval()


def batch_of(tokenizer, examples: dict = EXAMPLES) -> dict[str, torch.Tensor]:
    encoded = encode_union_examples(examples, tokenizer, max_length=64)
    features = [{k: encoded[k][i] for k in encoded} for i in range(len(examples["text"]))]
    return UnionDataCollator(tokenizer)(features)


def all_positions_losses(model: BertForUnionTraining, batch: dict[str, torch.Tensor]) -> tuple:
    """The slow reference: the head at every position, the unweighted ones dropped by the loss."""
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    outputs = model.bert(**inputs)
    logits = model.classifier(model.dropout(outputs.pooler_output))
    classification = F.cross_entropy(logits, batch["labels"])
    token_logits = model.cls(outputs.last_hidden_state)
    reconstruction = F.cross_entropy(
        token_logits.flatten(0, 1), batch["reconstruction_labels"].flatten(), ignore_index=IGNORE_INDEX
    )
    return classification, reconstruction, classification + model.reconstruction_weight * reconstruction


def gradients(model: BertForUnionTraining, loss: torch.Tensor) -> dict[str, torch.Tensor]:
    model.zero_grad(set_to_none=True)
    loss.backward()
    return {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}


def test_batch_has_padding_and_unweighted_context(tokenizer):
    batch = batch_of(tokenizer)
    mask, targets = batch["attention_mask"], batch["reconstruction_labels"]
    assert (mask == 0).any(), "no padding: the comparison below would not cover it"
    assert ((targets == IGNORE_INDEX) & (mask == 1)).sum() > len(mask), "context beyond [CLS] is weighted"
    assert (targets != IGNORE_INDEX).any()


def test_losses_and_gradients_equal_the_all_positions_computation(tokenizer):
    model = make_model(tokenizer)
    batch = batch_of(tokenizer)
    output = model(**batch)
    fast = gradients(model, output.loss)
    classification, reconstruction, joint = all_positions_losses(model, batch)
    slow = gradients(model, joint)
    assert output.classification_loss.item() == pytest.approx(classification.item(), abs=1e-5)
    assert output.reconstruction_loss.item() == pytest.approx(reconstruction.item(), abs=1e-5)
    assert output.loss.item() == pytest.approx(joint.item(), abs=1e-5)
    assert fast.keys() == slow.keys() and "cls.predictions.transform.dense.weight" in fast
    for name, grad in slow.items():
        torch.testing.assert_close(fast[name], grad, atol=1e-5, rtol=0, msg=name)


def test_reconstruction_head_runs_only_at_weighted_positions(tokenizer):
    model = make_model(tokenizer)
    batch = batch_of(tokenizer)
    rows_seen = []
    model.cls.predictions.transform.register_forward_hook(
        lambda _m, args, _o: rows_seen.append(args[0].shape[0])
    )
    model(**batch)
    assert rows_seen == [int((batch["reconstruction_labels"] != IGNORE_INDEX).sum())]
    assert rows_seen[0] < batch["input_ids"].numel() // 2


def vocabulary_problem(vocabulary: int, rows: int = 10, width: int = 8, bias: bool = True):
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(rows, width, generator=generator, requires_grad=True)
    weight = torch.randn(vocabulary, width, generator=generator, requires_grad=True)
    shift = torch.randn(vocabulary, generator=generator, requires_grad=True) if bias else None
    targets = torch.randint(vocabulary, (rows,), generator=generator)
    return hidden, weight, shift, targets


def leaf_grads(loss: torch.Tensor, *leaves: torch.Tensor | None) -> list[torch.Tensor]:
    present = [leaf for leaf in leaves if leaf is not None]
    return list(torch.autograd.grad(loss, present))


@pytest.mark.parametrize("bias", [True, False])
def test_vocabulary_cross_entropy_equals_linear_then_cross_entropy_over_several_row_blocks(bias):
    # 2**16 words: 4 rows per 1 MB block, so 10 rows are 3 blocks, the last one partial
    hidden, weight, shift, targets = vocabulary_problem(1 << 16, bias=bias)
    assert len(union_model._row_blocks(torch.empty(10, 1 << 16))) == 3
    fast = union_model.VocabularyCrossEntropy.apply(hidden, weight, shift, targets)
    slow = F.cross_entropy(F.linear(hidden, weight, shift), targets)
    assert fast.item() == pytest.approx(slow.item(), abs=1e-5)
    # each gradient sums 65,536 fp32 terms in another order than F.cross_entropy: rounding reaches ~1e-6
    for got, want in zip(*(leaf_grads(loss, hidden, weight, shift) for loss in (fast, slow)), strict=True):
        torch.testing.assert_close(got, want, atol=5e-6, rtol=1e-5)


def test_vocabulary_cross_entropy_under_autocast_keeps_the_parameters_dtypes():
    hidden, weight, shift, targets = vocabulary_problem(1 << 12)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fast = union_model.VocabularyCrossEntropy.apply(hidden, weight, shift, targets)
        slow = F.cross_entropy(F.linear(hidden, weight, shift).float(), targets)
    assert fast.dtype == torch.float32
    assert fast.item() == pytest.approx(slow.item(), rel=1e-2)
    for got, want in zip(*(leaf_grads(loss, hidden, weight, shift) for loss in (fast, slow)), strict=True):
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, want, atol=2e-3, rtol=5e-2)


def test_a_second_backward_through_the_reused_logits_fails_loudly():
    hidden, weight, shift, targets = vocabulary_problem(64)
    loss = union_model.VocabularyCrossEntropy.apply(hidden, weight, shift, targets)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="inplace"):
        loss.backward()


def test_batch_without_weighted_positions_trains_the_classifier_only(tokenizer):
    model = make_model(tokenizer)
    batch = batch_of(tokenizer)
    batch["reconstruction_labels"] = torch.full_like(batch["reconstruction_labels"], IGNORE_INDEX)
    output = model(**batch)
    assert output.reconstruction_loss.item() == 0.0
    assert output.loss.item() == pytest.approx(output.classification_loss.item(), abs=1e-7)
    grads = gradients(model, output.loss)
    assert all(torch.isfinite(g).all() for g in grads.values())


@pytest.mark.parametrize("weight", [0.0, WEIGHT])
def test_flop_formula_equals_torchs_count_of_a_training_step(tokenizer, weight):
    # eager attention: torch's counter has no formula for the CPU kernel of sdpa (same products)
    model = make_model(tokenizer, weight, attention="eager")
    batch = batch_of(tokenizer)
    rows, width = batch["input_ids"].shape
    reconstructed = int((batch["reconstruction_labels"] != IGNORE_INDEX).sum()) if weight else 0
    counter = FlopCounterMode(display=False)
    with counter:
        model(**batch).loss.backward()
    shape = bench.EncoderShape.of(model.config)
    assert bench.training_step_flops(shape, rows, width, reconstructed) == counter.get_total_flops()


def test_steady_throughput_times_the_steps_between_the_warmup_and_the_last_forward():
    shape = bench.EncoderShape(hidden=4, intermediate=8, layers=1, vocabulary=10, classes=2)
    steps = [
        {"rows": 2, "width": 5 + i, "tokens": 8, "reconstructed": 3, "start": start}
        for i, start in enumerate([0.0, 5.0, 6.0, 7.5, 9.0])
    ]
    measured = bench.steady_throughput({"shape": vars(shape), "steps": steps}, warmup=2)
    assert (measured.seconds, measured.steps, measured.examples) == (3.0, 2, 4)
    expected = sum(bench.training_step_flops(shape, 2, w, 3) for w in (7, 8))
    assert measured.flops == expected
    assert measured.padded_share == pytest.approx(1 - 16 / (2 * 7 + 2 * 8))
    assert measured.reconstructed_share == pytest.approx(6 / 16)
    with pytest.raises(SystemExit):
        bench.steady_throughput({"shape": vars(shape), "steps": steps}, warmup=4)


def test_synthetic_stories_have_roc_lengths():
    rng = bench.random.Random(0)
    # every word, placeholder and full stop is one word piece of the uncased BERT vocabulary
    lengths = torch.tensor([2 + len(" ".join(bench.synthetic_story(rng)).split()) for _ in range(2000)])
    assert 53 <= lengths.float().mean() <= 59
    assert lengths.float().std() >= 8
    assert lengths.min() >= 25 and lengths.max() <= 110
    assert (lengths < 45).float().mean() > 0.1 and (lengths > 70).float().mean() > 0.05


def test_synthetic_words_are_single_word_pieces():
    from benchmarks.machine import minilm_path

    try:
        path = minilm_path()
    except SystemExit:
        pytest.skip("MiniLM package not installed")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    assert all(len(tok.tokenize(word)) == 1 for word in [*bench.SENTENCE_WORDS, "."])


def test_recorder_keeps_the_forward_signature_the_trainer_filters_columns_by():
    wrapped = bench.ForwardRecorder().wrap(BertForUnionTraining.forward)
    assert inspect.signature(wrapped) == inspect.signature(BertForUnionTraining.forward)


def test_recorded_run_notes_the_batches_the_trainer_made(tmp_path, tokenizer, monkeypatch):
    base = tmp_path / "base"
    make_model(tokenizer).save_pretrained(base)
    tokenizer.save_pretrained(base)
    pairs = tmp_path / "pairs.jsonl"
    bench.write_synthetic_pairs(pairs, stories=12)
    args = bench.parse_arguments(
        ["--model", str(base), "--steps", "4", "--batch_size", "3", "--max_length", "64"]
    )
    monkeypatch.setenv("RANK", "0")
    argv = bench.train_union_argv(args, str(pairs), tmp_path / "run", weight=0.1) + ["--use_cpu", "true"]
    bench.record_training(str(tmp_path / "forwards.json"), argv)
    record = bench.json.loads((tmp_path / "forwards.json.0").read_text())
    assert record["shape"]["vocabulary"] == len(tokenizer)
    steps = record["steps"]
    assert [s["rows"] for s in steps] == [3] * 4
    assert all(0 < s["reconstructed"] < s["tokens"] <= s["rows"] * s["width"] for s in steps)
    assert [s["start"] for s in steps] == sorted(s["start"] for s in steps)
    assert not hasattr(BertForUnionTraining.forward, "__wrapped__")
