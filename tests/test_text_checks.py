"""Careless or hostile input to both metrics: one clear error naming the item or argument, or a documented result.

Each row is a case that once gave a traceback from deep inside a library or, worse, a number
that looked valid (the keys of a dict scored, 5 scored as "5", a random head's 0.5).
"""

from __future__ import annotations

import copy
import math
import pathlib
import re
import shutil
import warnings

import datasets
import evaluate
import numpy
import pytest
import safetensors.torch
import torch
import transformers
from gruen_models import save_all
from tiny_models import bert_config, roc_union_checkpoint, tokenizer

from story_quality.devices import check_device, non_finite_tensor
from story_quality.options import check_flag
from story_quality.text_checks import check_texts, is_blank, mostly_non_latin

REPO = pathlib.Path(__file__).resolve().parents[1]
STORY = "Ken went to the store. He bought milk. He went home happy."


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> pathlib.Path:
    return roc_union_checkpoint(tmp_path_factory)


@pytest.fixture(scope="module")
def union(checkpoint):
    return evaluate.load(str(REPO / "metrics" / "union"), str(checkpoint))


@pytest.fixture(scope="module")
def gruen_paths(tmp_path_factory):
    return save_all(tmp_path_factory.mktemp("gruen-models"))


@pytest.fixture(scope="module")
def gruen():
    return evaluate.load(str(REPO / "metrics" / "gruen"))


BAD_PREDICTIONS = [
    (
        datasets.Dataset.from_dict({"text": [STORY, STORY]})[:2],
        TypeError,
        r"datasets slice .* ds\[:2\]\['text'\]",
    ),
    ({"a": STORY}, TypeError, r"predictions is a dict"),
    ({STORY}, TypeError, r"in a fixed order"),
    (STORY, TypeError, r"got one str; wrap it"),
    ([STORY, 5], TypeError, r"predictions\[1\] is a int, not a string: 5"),
    ([STORY, None], ValueError, r"predictions\[1\] is None"),
    (None, ValueError, r"predictions is missing: pass predictions="),
]


@pytest.mark.parametrize(("predictions", "error", "message"), BAD_PREDICTIONS)
def test_union_refuses_what_is_not_a_list_of_stories(union, predictions, error, message):
    with pytest.raises(error, match=message):
        union.compute(predictions=predictions)


@pytest.mark.parametrize(("predictions", "error", "message"), BAD_PREDICTIONS)
def test_gruen_refuses_what_is_not_a_list_of_texts(gruen, gruen_paths, predictions, error, message):
    with pytest.raises(error, match=message):
        gruen.compute(predictions=predictions, **gruen_paths)


def test_add_batch_checks_each_story_before_it_is_stored(union, gruen):
    for metric in (union, gruen):
        with pytest.raises(TypeError, match=r"predictions\[1\] is a int"):
            metric.add_batch(predictions=[STORY, 5])


@pytest.mark.parametrize("text", ["\u200b", "\ufeff", "\x00", " \u200b \u2060 ", "\u00a0"])
def test_union_refuses_invisible_only_text_naming_its_index(union, text):
    with pytest.raises(
        ValueError, match=r"predictions\[1\] is empty, whitespace or invisible characters only"
    ):
        union.compute(predictions=[STORY, text])


def test_union_refuses_text_with_nothing_its_vocabulary_reads(union):
    with pytest.raises(ValueError, match=r"predictions\[0\] has nothing the model can read"):
        union.compute(predictions=["\u0ba4\u0bae\u0bbf\u0bb4\u0bcd \u0bae\u0bca\u0bb4\u0bbf", STORY])


WORDLESS = ["\U0001f600\U0001f600 \U0001f389", ".", "...", "!!! ???", "\u2014 \u2026 \u2014", "* * *"]


@pytest.mark.parametrize("text", WORDLESS)
def test_union_refuses_text_with_no_word_naming_its_index(union, text):
    with pytest.raises(ValueError, match=r"predictions\[1\] has no word: no letter or digit in any script"):
        union.compute(predictions=[STORY, text])


def test_gruen_scores_text_with_no_word_zero_as_blank_text(gruen, gruen_paths):
    result = gruen.compute(predictions=[*WORDLESS, "", "The dog ran home. It was happy."], **gruen_paths)
    assert result["gruen"][:-1] == [0.0] * (len(WORDLESS) + 1)
    assert result["grammaticality"][:-1] == [0.0] * (len(WORDLESS) + 1)
    assert result["gruen"][-1] > 0.0


# Chinese letters only, but most word pieces known (digits, punctuation): outside the language, not the vocabulary.
FOREIGN = "\u4ed6\u53bb\u4e86\u5546\u5e97 1 2 3 4 5 6 7 8 9 0 ."
# Latin letters only, but most word pieces unknown (emoji): outside the vocabulary, not the language.
UNKNOWN = "\U0001f600 \U0001f600 \U0001f600 \U0001f600 dog ran"


def unread_warnings(record) -> list[str]:
    return [str(w.message) for w in record if "mostly unread" in str(w.message)]


@pytest.mark.parametrize(
    ("text", "reason"),
    [(FOREIGN, "most of their letters are not Latin"), (UNKNOWN, "unknown to the checkpoint's vocabulary")],
)
def test_union_warns_naming_texts_mostly_outside_its_vocabulary_or_language(union, text, reason):
    with pytest.warns(UserWarning) as record:
        union.compute(predictions=[STORY, text, STORY])
    assert len(unread_warnings(record)) == 1
    assert reason in unread_warnings(record)[0] and "1 of 3 texts" in unread_warnings(record)[0]
    assert "(predictions[1])" in unread_warnings(record)[0]


def test_union_gives_no_unread_warning_for_english(union):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        union.compute(predictions=[STORY, "Caf\u00e9 cr\u00e8me, na\u00efve \u201cquotes\u201d."])
    assert unread_warnings(record) == []


def test_gruen_warns_naming_a_chinese_text(gruen, gruen_paths):
    chinese = "\u4ed6\u53bb\u4e86\u5546\u5e97\u3002\u4ed6\u4e70\u4e86\u725b\u5976\u3002"
    with pytest.warns(UserWarning) as record:
        gruen.compute(predictions=["The dog ran home. It was happy.", chinese], **gruen_paths)
    assert any("not Latin" in m and "(predictions[1])" in m for m in unread_warnings(record))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        gruen.compute(predictions=["The dog ran home. It was happy."], **gruen_paths)
    assert unread_warnings(record) == []


def test_gruen_scores_invisible_only_text_zero_as_blank_text(gruen, gruen_paths):
    result = gruen.compute(
        predictions=["\u200b \u200b", "", "The dog ran home. It was happy."], **gruen_paths
    )
    assert result["gruen"][0] == result["gruen"][1] == 0.0
    assert result["gruen"][2] > 0.0


def test_gruen_refuses_a_lone_surrogate_naming_its_index(gruen, gruen_paths):
    with pytest.raises(ValueError, match=r"predictions\[1\] holds a lone surrogate"):
        gruen.compute(predictions=["Fine.", "bad \ud800 text"], **gruen_paths)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"max_length": 0}, ValueError, r"max_length must be an integer >= 16, got 0"),
        ({"max_length": 3}, ValueError, r"max_length must be an integer >= 16, got 3"),
        ({"max_length": -5}, ValueError, r"max_length must be an integer >= 16, got -5"),
        ({"max_length": 2.5}, TypeError, r"max_length must be an integer >= 16, got float 2.5"),
        ({"max_length": "64"}, TypeError, r"max_length must be an integer >= 16, got str '64'"),
        ({"max_length": 4096}, ValueError, r"at most the model's window of 48"),
        ({"batch_size": "8"}, TypeError, r"batch_size must be an integer >= 1, got str '8'"),
        ({"batch_size": None}, TypeError, r"batch_size must be an integer >= 1, got NoneType"),
        ({"batch_size": 2.5}, TypeError, r"batch_size must be an integer >= 1, got float"),
        ({"batch_size": 0}, ValueError, r"batch_size must be an integer >= 1, got 0"),
        ({"device": "meta"}, ValueError, r"device 'meta' cannot run a metric"),
        ({"device": "gpu7"}, ValueError, r"device 'gpu7' is not a device name"),
        ({"prediction": [STORY]}, TypeError, r"unknown argument 'prediction'; did you mean 'predictions'"),
        ({"batchsize": 8}, TypeError, r"unknown argument 'batchsize'; did you mean 'batch_size'"),
    ],
)
def test_union_checks_every_option_before_any_work(union, options, error, message):
    with pytest.raises(error, match=message):
        union.compute(predictions=[STORY], **options)
    assert union.compute(predictions=[STORY])["scores"][0] >= 0.0  # the instance still works


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"batch_size": "8"}, TypeError, r"batch_size must be an integer >= 1, got str"),
        ({"batch_size": None}, TypeError, r"batch_size must be an integer >= 1, got NoneType"),
        ({"batch_size": 2.5}, TypeError, r"batch_size must be an integer >= 1, got float"),
        ({"device": "meta"}, ValueError, r"device 'meta' cannot run a metric"),
        ({"lm_modle": "x"}, TypeError, r"unknown argument 'lm_modle'; did you mean 'lm_model'"),
        ({"coherence": "false"}, TypeError, r"coherence must be True or False, got str 'false'"),
        ({"coherence": "no"}, TypeError, r"coherence must be True or False, got str 'no'"),
        ({"coherence": 1}, TypeError, r"coherence must be True or False, got int 1"),
        ({"coherence": None}, TypeError, r"coherence must be True or False, got NoneType"),
    ],
)
def test_gruen_checks_every_option_before_any_work(gruen, gruen_paths, options, error, message):
    with pytest.raises(error, match=message):
        gruen.compute(predictions=["The dog ran home."], **{**gruen_paths, **options})


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", 99])
def test_a_gpu_that_is_not_there_is_named(device):
    with pytest.raises(ValueError, match="no CUDA GPU"):
        check_device(device)


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="checks the message where MPS is absent")
def test_mps_that_is_not_there_is_named():
    with pytest.raises(ValueError, match="MPS is not available"):
        check_device("mps")


def test_a_named_checkpoint_with_a_revision_is_not_looked_up_as_a_hub_repo():
    # evaluate imports its own copy of the script's modules: their CheckpointError is an OSError
    with pytest.raises(OSError, match=r"'roc@v1' names no checkpoint: .*union-roc\) was never published"):
        evaluate.load(str(REPO / "metrics" / "union"), "roc@v1")


def save_bare_encoder(directory: pathlib.Path) -> pathlib.Path:
    tok = tokenizer()
    transformers.BertModel(bert_config(len(tok))).save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def test_union_refuses_a_bare_encoder_that_would_get_a_random_head(tmp_path):
    folder = save_bare_encoder(tmp_path / "encoder")
    with pytest.raises(OSError, match=r"its weights lack classifier\.bias, classifier\.weight.*randomly"):
        evaluate.load(str(REPO / "metrics" / "union"), str(folder))


@pytest.mark.parametrize("role", ["lm_model", "cola_model", "sop_model"])
def test_gruen_refuses_a_bare_encoder_for_each_model(gruen, gruen_paths, tmp_path, role):
    folder = save_bare_encoder(tmp_path / "encoder")
    with pytest.raises(OSError, match=r"its weights lack .*randomly initialised"):
        gruen.compute(predictions=["The dog ran home."], **{**gruen_paths, role: str(folder)}, coherence=True)


def test_blank_and_surrogate_checks_directly():
    assert is_blank("\u200b\u2060\ufeff \t") and not is_blank("\u200bx")
    assert check_texts(["\u200b"], allow_blank=True) == ["\u200b"]
    with pytest.raises(ValueError, match="lone surrogate"):
        check_texts(["a\udc00"], surrogates=False)


def with_one_bad_weight(source: pathlib.Path, target: pathlib.Path, value: float) -> tuple[pathlib.Path, str]:
    """A copy of the checkpoint folder ``source`` whose last floating-point weight holds ``value`` once."""
    shutil.copytree(source, target)
    weights = safetensors.torch.load_file(target / "model.safetensors")
    name = [key for key, tensor in weights.items() if tensor.is_floating_point()][-1]
    weights[name].view(-1)[0] = value
    safetensors.torch.save_file(weights, target / "model.safetensors", metadata={"format": "pt"})
    return target, name


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_union_refuses_a_checkpoint_with_a_non_finite_weight_naming_the_tensor(checkpoint, tmp_path, value):
    folder, name = with_one_bad_weight(checkpoint, tmp_path / "bad", value)
    with pytest.raises(OSError, match=rf"its tensor {re.escape(name)} holds NaN or infinite weights"):
        evaluate.load(str(REPO / "metrics" / "union"), str(folder))


@pytest.mark.parametrize("role", ["lm_model", "cola_model", "sop_model"])
def test_gruen_refuses_a_model_with_a_nan_weight_naming_the_tensor(gruen, gruen_paths, tmp_path, role):
    folder, name = with_one_bad_weight(pathlib.Path(gruen_paths[role]), tmp_path / "bad", math.nan)
    with pytest.raises(OSError, match=rf"its tensor {re.escape(name)} holds NaN or infinite weights"):
        gruen.compute(predictions=["The dog ran home."], **{**gruen_paths, role: str(folder)}, coherence=True)
    assert gruen.compute(predictions=["The dog ran home."], **gruen_paths)["gruen"][0] >= 0.0


def test_check_flag_takes_numpy_bools_and_refuses_the_rest():
    assert check_flag(numpy.bool_(True), "coherence") is True
    assert check_flag(False, "coherence") is False
    for value in ("true", "False", 0, 1, 1.0, None, [True]):
        with pytest.raises(TypeError, match=r"coherence must be True or False"):
            check_flag(value, "coherence")


def test_gruen_s_unread_warning_points_at_the_callers_line(gruen, gruen_paths):
    with pytest.warns(UserWarning) as record:
        gruen.compute(
            predictions=["The dog ran home.", "\u4ed6\u53bb\u4e86\u5546\u5e97\u3002"], **gruen_paths
        )
    unread = [w.filename for w in record if "mostly unread" in str(w.message)]
    assert unread and set(unread) == {__file__}


def test_mostly_non_latin_counts_every_letter_as_a_character_by_character_reading_does():
    import random
    import unicodedata

    def by_characters(text: str) -> bool:
        letters = [c for c in text if c.isalpha()]
        return 2 * sum(not unicodedata.name(c, "").startswith("LATIN") for c in letters) > len(letters)

    rng = random.Random(0)
    alphabet = "ab .\u00e9\u00df\u4ed6\u53bb\u0416\u0443\u03b1\u0661\U0001f600\u0300"
    texts = ["", "...", "plain ascii", "\u4ed6\u53bb ab", "\u4ed6 abc"]
    texts += ["".join(rng.choices(alphabet, k=rng.randint(1, 12))) for _ in range(500)]
    assert [mostly_non_latin(t) for t in texts] == [by_characters(t) for t in texts]
    assert any(mostly_non_latin(t) for t in texts) and not all(mostly_non_latin(t) for t in texts)


def test_a_bad_weight_in_any_piece_of_a_large_tensor_is_named():
    """Tensors past one thread's reduction are summed in pieces: a NaN or infinity in the last,
    partial piece counts, and finite pieces whose sums overflow do not."""
    from story_quality.devices import ONE_THREAD_ELEMENTS

    elements = 3 * ONE_THREAD_ELEMENTS + 5
    model = torch.nn.Linear(elements, 1, bias=False)
    assert non_finite_tensor(model) is None
    for where in (0, ONE_THREAD_ELEMENTS, elements - 1):
        for bad in (math.nan, math.inf):
            broken = copy.deepcopy(model)
            with torch.no_grad():
                broken.weight[0, where] = bad
            assert non_finite_tensor(broken) == "weight"
    with torch.no_grad():
        model.weight[0, -ONE_THREAD_ELEMENTS:] = torch.finfo(torch.float32).max
    assert non_finite_tensor(model) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_weights_whose_sum_overflows_are_finite_and_any_nan_or_infinity_is_named(dtype):
    """The scan reads a tensor's sum first: a sum that overflows must not count as a bad weight."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)).to(dtype)
    with torch.no_grad():
        model[1].weight.fill_(torch.finfo(dtype).max)  # finite, but their sum is not
    assert non_finite_tensor(model) is None
    for bad in (math.nan, math.inf, -math.inf, (math.inf, -math.inf)):
        broken = copy.deepcopy(model)
        with torch.no_grad():
            broken[1].bias[: len(bad) if isinstance(bad, tuple) else 1] = torch.tensor(bad, dtype=dtype)
        assert non_finite_tensor(broken) == "1.bias"
