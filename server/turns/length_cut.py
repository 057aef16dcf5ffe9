"""Why a reply that completed at `finish_reason: "length"` was cut: at its own token limit
(`max_tokens`, the chat's "Longest reply": Continue goes on), or because the model's context
was full (the prompt and the reply took all of it: only a shorter prompt, a summary of the
earlier messages, makes room). Backends say "length" for both.

Decided here, where the turn's figures are, and said in its usage (`context_full`, stored
with the reply and sent in its final chunk), so that no client has to guess from numbers it
may not have: the model's context, and the last model call's prompt and reply tokens.
"""

from __future__ import annotations

from server.models.base import StreamEnd
from server.models.context import SAFETY_MARGIN
from server.types import Usage


def context_full(finished: StreamEnd, info: Usage, context: int | None) -> bool:
    """Whether the last model call stopped at "length" because its prompt and reply filled
    the model's context (`context` tokens; None: not known, so not said).

    `info` is the call's own figures before it streamed: the local engine's prompt count,
    the one its reply's room was taken from (the rest of the context). An upstream gives its
    prompt's count with its usage. A count may differ from the engine's by a few tokens (a
    chat template's own), hence the margin; a reply's `max_tokens` that ends that close to
    the context left it full anyway."""
    if finished.finish_reason != "length" or context is None:
        return False
    usage = finished.usage or {}
    prompt = info.get("prompt_tokens", usage.get("prompt_tokens"))
    completion = usage.get("completion_tokens")
    if prompt is None or completion is None:
        return False  # an upstream that gave no usage: not known
    return prompt + completion >= context - SAFETY_MARGIN
