"""The signature every score carries: what made the number, so that others can reproduce it.

Like sacrebleu's signature and bert_score's hashcode, one line names the metric, the package
version, the checkpoint (a Hub id with its revision, or for a local or shipped folder the sha256
of its weights, config and tokenizer files) and every setting that changes a score::

    union|v0.4.0|checkpoint:default@sha256:3a4b8eea5c1e|norm:lowercase+replace_names+roc_tokenize|window:256|long:windows|fp32

Report it beside the numbers it produced. :class:`Signature` is the one place it is written and
read back: the scorers format it, the human scale and ``compare`` parse it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from story_quality.precision import FP32_LIBRARY_LABELS, SIGNATURE_LABELS
from story_quality.versions import package_version

SEPARATOR = "|"
_VERSION_PREFIX = "v"


class SignatureError(ValueError):
    """Text that is not a signature of this package."""


@dataclasses.dataclass(frozen=True)
class Signature:
    """``metric|vVERSION|part|part...``: each part a ``key:value`` setting or a bare word (the precision).

    >>> s = Signature.parse("union|v0.4.0|checkpoint:default@sha256:ab|window:256|fp32")
    >>> s.metric, s["checkpoint"], s["window"], str(s) == "union|v0.4.0|checkpoint:default@sha256:ab|window:256|fp32"
    ('union', 'default@sha256:ab', '256', True)
    """

    metric: str
    version: str
    parts: tuple[str, ...]

    @classmethod
    def of(cls, metric: str, *parts: str) -> Signature:
        """A signature of this package's installed version."""
        return cls(metric, package_version(), tuple(parts))

    @classmethod
    def parse(cls, text: str | Signature) -> Signature:
        """A signature from its text (a :class:`Signature` is returned as it is), or :class:`SignatureError`."""
        if isinstance(text, Signature):
            return text
        if not isinstance(text, str):
            raise SignatureError(f"a signature is a string, got {type(text).__name__}")
        metric, *rest = text.split(SEPARATOR)
        if not metric or not rest or not rest[0].startswith(_VERSION_PREFIX):
            raise SignatureError(f"{text!r} is not a signature (metric|vVERSION|...)")
        return cls(metric, rest[0].removeprefix(_VERSION_PREFIX), tuple(rest[1:]))

    @classmethod
    def parse_or_none(cls, text: str) -> Signature | None:
        """A signature from its text, or None for text another tool wrote (an opaque label)."""
        try:
            return cls.parse(text)
        except SignatureError:
            return None

    def __str__(self) -> str:
        return SEPARATOR.join([self.metric, f"{_VERSION_PREFIX}{self.version}", *self.parts])

    def get(self, key: str) -> str | None:
        """The value of the ``key:`` part, or None."""
        for part in self.parts:
            name, colon, value = part.partition(":")
            if colon and name == key:
                return value
        return None

    def __getitem__(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise SignatureError(f"the signature {self} has no {key!r} part")
        return value

    def without(self, *keys: str) -> Signature:
        """The signature less its ``key:`` parts named."""
        return dataclasses.replace(
            self, parts=tuple(part for part in self.parts if part.partition(":")[0] not in keys)
        )

    def with_part(self, part: str) -> Signature:
        return dataclasses.replace(self, parts=(*self.parts, part))

    def as_compared(self) -> Signature:
        """The signature as two files must share it to be joined (a resumed run) or compared: either fp32
        library reads as ``fp32``, since their scores agree to 1e-6 (:data:`FP32_LIBRARY_LABELS`).

        >>> one = Signature.parse("union|v0.5.0|window:256|fp32-onednn")
        >>> one.as_compared() == Signature.parse("union|v0.5.0|window:256|fp32").as_compared()
        True
        >>> one.as_compared() == Signature.parse("union|v0.5.0|window:256|bf16-autocast").as_compared()
        False
        """
        fp32 = FP32_LIBRARY_LABELS[0]
        return dataclasses.replace(
            self, parts=tuple(fp32 if part in FP32_LIBRARY_LABELS else part for part in self.parts)
        )

    def scoring_parts(self) -> tuple[str, ...]:
        """What changes a score: the metric and every part but the package version and the precision
        (bf16 autocast moves scores by about 1e-3; it does not change what is scored)."""
        return (self.metric, *(part for part in self.parts if part not in SIGNATURE_LABELS.values()))


def normalization_label(flags: Mapping[str, bool | str]) -> str:
    """The normalisation's switched-on options joined by ``+`` (``none`` for the identity); a recorded
    table hash is shortened to 12 digits.

    >>> normalization_label({"lowercase": True, "replace_names": False, "names_sha256": "738a6f0ef98e0ff1"})
    'lowercase+names_sha256:738a6f0ef98e'
    """
    parts = [f"{name}:{on[:12]}" if isinstance(on, str) else name for name, on in flags.items() if on]
    return "+".join(parts) or "none"
