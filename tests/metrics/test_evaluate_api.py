"""The rest of evaluate's API with both metrics: combine's add / add_batch / compute, the evaluator."""

from __future__ import annotations

import datasets
import evaluate
import pytest
import torch
import transformers
from conftest import REPO
from gruen_models import save_all
from tiny_models import save_union_checkpoint, tokenizer

from story_quality.evaluation.evaluator import GeneratedTextEvaluator, bootstrap_means

TEXTS = ["The dog ran home. It was happy.", "He went to school. Then he ate.", "She was sad. She slept."]


@pytest.fixture(scope="module")
def unions(tmp_path_factory) -> tuple[evaluate.EvaluationModule, evaluate.EvaluationModule]:
    root = tmp_path_factory.mktemp("union-api")
    first = save_union_checkpoint(root / "a", normalization=None, max_length=48, seed=0)
    second = save_union_checkpoint(root / "b", normalization=None, max_length=48, seed=1)
    metric = str(REPO / "metrics" / "union")
    return evaluate.load(metric, str(first)), evaluate.load(metric, str(second))


@pytest.fixture(scope="module")
def gruen_paths(tmp_path_factory) -> dict[str, str]:
    return save_all(tmp_path_factory.mktemp("gruen-api"))


def test_combine_add_add_batch_and_compute_with_union(unions):
    combined = evaluate.combine({"a": unions[0], "b": unions[1]})
    direct = combined.compute(predictions=TEXTS)
    # add and add_batch separately: how evaluate orders a mix of the two differs between its versions
    for text in TEXTS:
        combined.add(prediction=text)
    added = combined.compute()
    combined.add_batch(predictions=TEXTS)
    batched = combined.compute()
    for gathered in (added, batched):
        assert gathered["a_scores"] == pytest.approx(direct["a_scores"], abs=1e-6)
        assert gathered["b_scores"] == pytest.approx(direct["b_scores"], abs=1e-6)
    assert direct["a_scores"] != pytest.approx(direct["b_scores"], abs=1e-3)


def test_combine_add_with_gruen(gruen_paths):
    gruen = evaluate.load(str(REPO / "metrics" / "gruen"))
    combined = evaluate.combine([gruen])
    for text in TEXTS:
        combined.add(prediction=text)
    assert (
        combined.compute(**gruen_paths)["scores"] == gruen.compute(predictions=TEXTS, **gruen_paths)["scores"]
    )


def test_add_refuses_a_text_given_twice(unions):
    with pytest.raises(TypeError, match="prediction= and predictions="):
        unions[0].add(prediction=TEXTS[0], predictions=TEXTS[1])


def text_generator() -> transformers.Pipeline:
    """A tiny GPT-2 over the tiny BERT vocabulary, greedy, eight new tokens."""
    tok = tokenizer()
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(tok) + 16, n_positions=512, n_embd=16, n_layer=1, n_head=2,
        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
    )  # fmt: skip
    model = transformers.GPT2LMHeadModel(config).eval()
    model.generation_config.max_new_tokens = 8
    model.generation_config.do_sample = False
    return transformers.pipeline("text-generation", model=model, tokenizer=tok, device=-1)


def test_evaluator_scores_generated_text_and_bootstraps_the_mean(unions):
    prompts = datasets.Dataset.from_dict(
        {"text": ["the dog went home .", "she ran to the store .", "he ate ."]}
    )
    result = GeneratedTextEvaluator().compute(
        model_or_pipeline=text_generator(), data=prompts, metric=unions[0],
        strategy="bootstrap", n_resamples=200, random_state=0,
    )  # fmt: skip
    scores = result["scores"]
    assert len(scores) == 3 and result["signature"].startswith("union|")
    mean = result["union_score"]
    assert mean["score"] == pytest.approx(sum(scores) / 3)
    low, high = mean["confidence_interval"]
    assert min(scores) <= low <= mean["score"] <= high <= max(scores) and mean["standard_error"] > 0


def test_bootstrap_needs_two_texts():
    with pytest.raises(ValueError, match="union_score needs at least two texts"):
        bootstrap_means({"scores": [0.5], "union_score": 0.5})


def test_a_pipeline_of_another_task_is_refused(unions):
    class Other:
        task = "fill-mask"

    with pytest.raises(ValueError, match="'fill-mask' pipeline"):
        GeneratedTextEvaluator().prepare_pipeline(Other())
