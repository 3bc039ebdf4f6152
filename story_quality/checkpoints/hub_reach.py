"""Whether the Hub endpoint answers, asked once with a short timeout before a model is fetched from it.

``huggingface_hub`` retries a file lookup on a network error with exponential backoff (about 50 s
against an ``HF_ENDPOINT`` that refuses connections, longer against one that never answers)
before ``transformers`` reports that it could not connect. One request with a bounded timeout and
no retry, made only for this lookup (nothing global is changed), tells a dead endpoint in
seconds; the model is then looked up in the local cache alone, and a miss fails at once with the
metric's own message.
"""

from __future__ import annotations

import huggingface_hub
from huggingface_hub import constants

# Seconds the endpoint has to answer the one probe (any HTTP answer, even an error status, counts).
PROBE_TIMEOUT = 5.0


def endpoint() -> str:
    """The Hub endpoint ``huggingface_hub`` uses (``HF_ENDPOINT``, default https://huggingface.co)."""
    return constants.ENDPOINT


def unreachable_hub(timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why the Hub endpoint cannot be reached (no answer within ``timeout`` seconds), or None when it
    answers or when offline mode is on (then ``huggingface_hub`` reads the local cache itself)."""
    if constants.HF_HUB_OFFLINE:
        return None
    try:
        huggingface_hub.utils.get_session().head(endpoint(), timeout=timeout, follow_redirects=False)
    except Exception as error:  # noqa: BLE001 - any transport failure means the endpoint is unreachable
        cause = str(error).strip() or type(error).__name__
        return f"the Hub endpoint {endpoint()} did not answer within {timeout:g} s ({cause})"
    return None


def hub_lookup_options(source: str, is_local: bool) -> tuple[dict[str, bool], str | None]:
    """``from_pretrained`` keywords for loading ``source`` and why the Hub is out of reach (or None):
    a dead endpoint turns the lookup into a local-cache one (``local_files_only=True``)."""
    if is_local:
        return {}, None
    problem = unreachable_hub()
    return ({"local_files_only": True}, problem) if problem else ({}, None)
