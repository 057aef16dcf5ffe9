"""The OpenAI `chat.completion.chunk` format, as an upstream streams it: each event's JSON
read once, validated there, and turned into text, a finish reason, usage and tool-call pieces.
Anything malformed is skipped or is a BackendError that says what the upstream sent."""

from __future__ import annotations

import json
from typing import Any

from server.errors import BackendError
from server.models.base import ToolCallDelta
from server.text import valid_unicode
from server.types import FinishReason, Usage


def _no_constant(name: str) -> None:
    return None  # NaN / Infinity are not JSON numbers: treated as absent


# One decoder for every chunk: `json.loads` with an argument builds a new one per call, which
# cost as much as the parse itself at a token per chunk.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def parse_chunk(data: bytes) -> dict[str, Any]:
    try:
        chunk = _DECODER.decode(data.decode())
    except RecursionError as exc:
        raise BackendError("the upstream sent JSON nested too deeply to read") from exc
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        raise BackendError(f"the upstream sent something that is not JSON: {data[:200]!r}") from exc
    if not isinstance(chunk, dict):
        raise BackendError("the upstream sent a chunk that is not a JSON object")
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise BackendError(f"the upstream reported an error: {valid_unicode(str(message))}")
    return chunk


def read_chunk(chunk: dict[str, Any]) -> tuple[str, FinishReason | None, Usage | None]:
    text = ""
    finish: FinishReason | None = None
    choices = chunk.get("choices") or []
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str):
            text = content
        reason = choice.get("finish_reason")
        if reason in ("length", "tool_calls"):
            finish = reason
        elif reason == "function_call":  # OpenAI's older name for the same
            finish = "tool_calls"
        elif reason:
            finish = "stop"
    return text, finish, _usage(chunk.get("usage"))


def tool_call_deltas(chunk: dict[str, Any]) -> list[ToolCallDelta]:
    """The pieces of tool calls in a chunk (`choices[0].delta.tool_calls`); malformed
    entries are skipped (a call that never gets a name fails as a step, visibly)."""
    choices = chunk.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return []
    delta = choices[0].get("delta")
    calls = delta.get("tool_calls") if isinstance(delta, dict) else None
    if not isinstance(calls, list):
        return []
    found = []
    for position, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        index = call.get("index", position)
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 128:
            continue
        found.append(
            ToolCallDelta(
                index=index,
                id=valid_unicode(call_id) if isinstance(call_id, str) and call_id else None,
                name=valid_unicode(name) if isinstance(name, str) and name else None,
                arguments=valid_unicode(arguments) if isinstance(arguments, str) else "",
            )
        )
    return found


# What Parley keeps of an upstream's usage: OpenAI's token counts. Other keys are dropped (the
# rest of a saved usage is Parley's own, and a key is text no client should have to take).
USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _usage(value: object) -> Usage | None:
    """Only whole, non-negative token counts survive (no NaN, no 1e400, no strings)."""
    if not isinstance(value, dict):
        return None
    usage: Usage = {
        key: count
        for key, count in value.items()
        if key in USAGE_COUNTS
        and isinstance(count, int)
        and not isinstance(count, bool)
        and 0 <= count < 2**53
    }
    return usage or None
