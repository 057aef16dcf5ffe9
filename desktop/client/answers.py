"""The server's answers, checked before the window uses them: the keys each kind of object
must have (the server's own shapes; a check that catches a wrong server or version, not a
full validation), and an error answer as the ClientError it stands for."""

from __future__ import annotations

import json
from typing import TypeVar, cast

from desktop.errors import ClientError

T = TypeVar("T")

CONVERSATION_KEYS = ("id", "title", "model", "system", "created_at", "updated_at")
MODEL_KEYS = ("name", "kind", "state", "slots", "slots_busy", "queue_length", "removable")
CITATION_KEYS = ("n", "path", "page", "lines", "quote")
APPROVAL_KEYS = ("call_id", "server", "tool", "function", "arguments")
DECISION_KEYS = ("decision", "remember", "step")
OVERDUE_KEYS = ("call_id", "server", "tool", "function", "waited_s")
OVERDUE_ANSWER_KEYS = ("action", "step")
STEP_KEYS = ("id", "server", "name", "arguments", "status", "result", "started_at", "ended_at")
SUMMARY_KEYS = ("id", "through_id", "content", "model", "created_at", "updated_at")
CONTEXT_KEYS = ("model", "limit", "budget", "estimated", "used", "system", "history", "tools",
                "messages", "summarised", "summary_id")  # fmt: skip
MESSAGE_KEYS = ("id", "conversation_id", "role", "content", "status", "ended_by", "error",
                "model", "created_at", "completed_at", "usage")  # fmt: skip


def shaped(kind: type[T], keys: tuple[str, ...], value: object) -> T:
    """`value` as `kind`, once it is an object with `keys` (the server's own shapes; a
    check that catches a wrong server or version, not a full validation)."""
    if not isinstance(value, dict) or not all(key in value for key in keys):
        raise ClientError(f"the server's answer is not a {kind.__name__}")
    return cast(T, value)


def error_from(status: int, raw: bytes) -> ClientError:
    try:
        error = json.loads(raw)["error"]
        return ClientError(str(error["message"]), status=status, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        return ClientError(f"the server answered HTTP {status}", status=status)
