"""Checks at the edge of both metrics: what a user passes is refused with the argument and the item named.

Everything here runs before any model work, so a bad call fails in microseconds with a message
that says what is expected, never deep inside a tokenizer or torch.
"""

from __future__ import annotations

import collections
import functools
import numbers
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy
import torch

from story_quality.warning_origin import user_stacklevel

# Characters no reader sees: controls, format characters (zero-width spaces, BOMs), lone surrogates.
# Union's normalisation turns them into spaces (story_text.remove_invisible).
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
# Blank text holds nothing but those, separators and combining marks.
_BLANK_CATEGORIES = INVISIBLE_CATEGORIES | {"Zs", "Zl", "Zp", "Mn", "Me"}
SCORABLE_HINT = "every text must hold at least one word (a letter or a digit)"


def is_blank(text: str) -> bool:
    """True when ``text`` holds nothing a reader sees: whitespace, zero-width and control characters.

    >>> is_blank(" \\u200b\\ufeff\\x00"), is_blank("a\\u200b")
    (True, False)
    """
    return all(c.isspace() or unicodedata.category(c) in _BLANK_CATEGORIES for c in text)


def has_word(text: str) -> bool:
    """True when ``text`` holds a word: at least one letter or digit, in any script.

    Text without one (punctuation, symbols, emoji) gives a metric nothing to read: union refuses
    it as it refuses blank text, and gruen scores it 0.0 as it scores blank text.

    >>> has_word("..."), has_word("\U0001f600 \U0001f389"), has_word("\u72d7"), has_word("42!")
    (False, False, True, True)
    """
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def mostly_non_latin(text: str) -> bool:
    """True when more than half of the letters of ``text`` are not Latin (Chinese, Cyrillic ...):
    text outside the language of the English checkpoints both metrics ship with.

    >>> mostly_non_latin("\u4ed6\u53bb\u4e86\u5546\u5e97\u3002 OK."), mostly_non_latin("Caf\u00e9 cr\u00e8me")
    (True, False)
    """
    if text.isascii():  # every ASCII letter is Latin
        return False
    letters = {c: n for c, n in collections.Counter(text).items() if c.isalpha()}
    foreign = sum(n for c, n in letters.items() if not _is_latin(c))
    return 2 * foreign > sum(letters.values())


@functools.lru_cache(maxsize=4096)
def _is_latin(letter: str) -> bool:
    return unicodedata.name(letter, "").startswith("LATIN")


# A text with more than this share of its word pieces unknown to the vocabulary is mostly unread.
UNKNOWN_SHARE_WARNING = 0.5


def unknown_share(piece_ids: Iterable[int], unknown_id: int | None, special_ids: Iterable[int]) -> float:
    """The share of a text's word pieces (special tokens left out) that the vocabulary does not know."""
    special = set(special_ids) - {unknown_id}
    pieces = [piece for piece in piece_ids if piece not in special]
    return sum(piece == unknown_id for piece in pieces) / len(pieces) if pieces else 0.0


def unknown_shares(tokenizer, texts: Sequence[str]) -> list[float]:
    """:func:`unknown_share` of each text, as ``tokenizer`` splits it."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
    return [unknown_share(ids, tokenizer.unk_token_id, tokenizer.all_special_ids) for ids in encoded]


def warn_unread_texts(texts: Sequence[str], unknown_shares: Sequence[float]) -> None:
    """Warn, naming the items, when most of a text is outside the checkpoint's vocabulary (over half
    of its word pieces unknown) or outside its language (mostly a non-Latin script): such scores
    come out as numbers but say little about the text."""
    # Text with no word has its own documented treatment (refused, or scored as blank): no warning.
    unknown = [
        i for i, share in enumerate(unknown_shares) if share > UNKNOWN_SHARE_WARNING and has_word(texts[i])
    ]
    foreign = [i for i, text in enumerate(texts) if mostly_non_latin(text)]
    for items, what in (
        (unknown, "most of their word pieces are unknown to the checkpoint's vocabulary"),
        (foreign, "most of their letters are not Latin, and the checkpoints read English"),
    ):
        if items:
            named = ", ".join(f"predictions[{i}]" for i in items[:10]) + (", ..." if len(items) > 10 else "")
            warnings.warn(
                f"{len(items)} of {len(texts)} texts are mostly unread: {what} ({named}); "
                "their scores say little about them.",
                stacklevel=user_stacklevel(),
            )


def check_texts(predictions: Any, *, surrogates: bool = True, allow_blank: bool = False) -> list[str]:
    """``predictions`` as a list of strings, or an error naming what is wrong and where.

    ``surrogates=False`` refuses a lone surrogate (half of a UTF-16 pair: a decoding error
    upstream) instead of letting the caller's normalisation drop it; ``allow_blank`` lets a
    metric that gives blank text, and text with no word (:func:`has_word`), a documented score
    take it.
    """
    if predictions is None:
        raise ValueError("predictions is missing: pass predictions=[...] (a list of strings) to compute.")
    if isinstance(predictions, str | bytes):
        raise TypeError(
            f"predictions must be a list of strings, got one {type(predictions).__name__}; wrap it: [text]."
        )
    if isinstance(predictions, Mapping):
        raise TypeError(
            f"predictions is a {type(predictions).__name__} (keys {list(predictions)[:3]}), not a list of "
            "strings; a datasets slice such as ds[:2] is a dict of columns: pass ds[:2]['text'] or ds['text']."
        )
    if isinstance(predictions, set | frozenset) or not isinstance(predictions, Sequence | Iterable):
        raise TypeError(
            f"predictions must be a list of strings (in a fixed order), got {type(predictions).__name__}."
        )
    texts = list(predictions)
    for i, text in enumerate(texts):
        if text is None:
            raise ValueError(f"predictions[{i}] is None; every text must be a non-empty string.")
        if not isinstance(text, str):
            raise TypeError(f"predictions[{i}] is a {type(text).__name__}, not a string: {text!r:.80}")
        if not allow_blank and is_blank(text):
            raise ValueError(
                f"predictions[{i}] is empty, whitespace or invisible characters only; {SCORABLE_HINT}."
            )
        if not allow_blank and not has_word(text):
            raise ValueError(
                f"predictions[{i}] has no word: no letter or digit in any script (punctuation, symbols or "
                f"emoji only: {text!r:.40}); {SCORABLE_HINT}."
            )
        if not surrogates and any(unicodedata.category(c) == "Cs" for c in text):
            raise ValueError(
                f"predictions[{i}] holds a lone surrogate (half of a UTF-16 pair), which is not text; "
                "decode the input with errors='replace' or fix its encoding."
            )
    return texts


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """An integer option (not a bool, float or string) no smaller than ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {type(value).__name__} {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}.")
    return int(value)


def check_flag(value: Any, name: str) -> bool:
    """A yes/no option: True or False only (numpy's bool too), never a string, number or None.

    ``bool("false")`` is True, so a string is refused rather than read; 0 and 1 are refused too,
    so that every flag is written one way.

    >>> check_flag(False, "coherence")
    False
    >>> check_flag("false", "coherence")
    Traceback (most recent call last):
    ...
    TypeError: coherence must be True or False, got str 'false'.
    """
    if isinstance(value, numpy.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}.")
    return value


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """A string option that must be one of ``choices``.

    >>> check_choice("windows", "long_stories", ("head", "windows"))
    'windows'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def check_window(max_length: Any, limit: int, minimum: int) -> int | None:
    """The caller's word-piece window (None: the model's), between ``minimum`` and the model's ``limit``."""
    if max_length is None:
        return None
    value = check_count(max_length, "max_length", minimum)
    if value > limit:
        raise ValueError(
            f"max_length must be at most the model's window of {limit} word pieces, got {value}."
        )
    return value


def check_device(device: Any) -> torch.device:
    """The device to run on (None: the first GPU, else the CPU), refused when it does not exist here."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(device, bool) or not isinstance(device, str | int | torch.device):
        raise TypeError(f"device must be a string, an int (a GPU index) or a torch.device, got {device!r}.")
    try:
        resolved = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    except (RuntimeError, ValueError) as error:
        raise ValueError(
            f"device {device!r} is not a device name ({error}); use 'cpu', 'cuda' or 'cuda:0'."
        ) from None
    if resolved.type == "cpu":
        return resolved
    if resolved.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"device {device!r}: this machine has no CUDA GPU; use device='cpu'.")
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(f"device {device!r}: this machine has {count} CUDA GPU(s) (0..{count - 1}).")
        return resolved
    if resolved.type == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(f"device {device!r}: MPS is not available on this machine; use device='cpu'.")
        return resolved
    raise ValueError(f"device {device!r} cannot run a metric; use 'cpu', 'cuda' or 'mps'.")


def non_finite_tensor(model: torch.nn.Module) -> str | None:
    """The name of the first floating-point weight or buffer of ``model`` holding a NaN or an
    infinity (a diverged run, an fp16 overflow), or None: such a checkpoint scores every text NaN."""
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            return name
    return None


# What a user may pass to compute to choose union's checkpoint, which is evaluate.load's config_name.
CONFIG_NAME_ARGUMENTS = ("checkpoint", "config_name", "model", "model_name", "model_name_or_path", "revision")


def check_options(
    given: Mapping[str, Any], known: Sequence[str], config_name_arguments: Sequence[str] = ()
) -> None:
    """Refuse a misspelt or unknown option, naming it and the closest known one; one of
    ``config_name_arguments`` (a checkpoint chosen at compute time) is sent to evaluate.load.

    >>> check_options({"checkpoint": "org/model"}, ["batch_size"], CONFIG_NAME_ARGUMENTS)
    Traceback (most recent call last):
    ...
    TypeError: compute() takes no 'checkpoint': the checkpoint is evaluate.load's second argument, config_name (evaluate.load(path, "org/model@revision")); load one metric instance per checkpoint.
    """
    import difflib

    for name in given:
        if name in config_name_arguments:
            raise TypeError(
                f"compute() takes no {name!r}: the checkpoint is evaluate.load's second argument, config_name "
                '(evaluate.load(path, "org/model@revision")); load one metric instance per checkpoint.'
            )
        if name not in known:
            close = difflib.get_close_matches(name, [*known, "predictions", "references"], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"compute() got an unknown argument {name!r}{hint} It takes {', '.join(known)}.")


def text_metric_info(
    description: str,
    inputs_description: str,
    citation: str,
    reference_url: str,
    codebase_url: str | None = None,
):
    """The ``evaluate.MetricInfo`` of a metric whose only input is ``predictions``, one string each."""
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=datasets.Features({"predictions": datasets.Value("string")}),
        codebase_urls=[codebase_url] if codebase_url else [],
        reference_urls=[reference_url],
    )


class CheckedInputs:
    """Mixin for an ``evaluate.Metric``: every text is checked before ``evaluate`` stores it.

    ``evaluate`` encodes what ``add_batch``/``add`` receive with Arrow, which would turn 5 into
    "5" and None into a null without a word; here the metric's own check runs first.
    """

    def check_predictions(self, predictions: Any) -> list[str]:
        return check_texts(predictions)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Check every text, then store the batch as ``evaluate`` does."""
        return super().add_batch(
            predictions=self.check_predictions(predictions), references=references, **kwargs
        )

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Check one text, then store it as ``evaluate`` does.

        ``evaluate.combine([...]).add(prediction=x)`` hands the text over as ``predictions=x`` (the
        feature's name): one text under either name is taken, both at once are refused.
        """
        prediction = one_prediction(prediction, kwargs.pop("predictions", None))
        return super().add(prediction=self.check_predictions([prediction])[0], reference=reference, **kwargs)


def one_prediction(prediction: Any, predictions: Any) -> Any:
    """The one text ``add`` was given, as ``prediction=`` (evaluate's name) or ``predictions=``
    (the name ``evaluate.combine`` passes); refused when given under both names.

    >>> one_prediction(None, "A story.")
    'A story.'
    """
    if prediction is not None and predictions is not None:
        raise TypeError(
            "add() got the text twice, as prediction= and predictions=; pass one text as prediction=."
        )
    return predictions if prediction is None else prediction
