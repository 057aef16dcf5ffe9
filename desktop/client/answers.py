"""The server's answers, checked before the window uses them: the keys each kind of object
must have (the server's own shapes; a check that catches a wrong server or version, not a
full validation), and an error answer as the ClientError it stands for."""

from __future__ import annotations

import json
from typing import TypeVar, cast, is_typeddict

from desktop.errors import ClientError
from server.types import (
    CitationPartJSON,
    ContextJSON,
    ConversationJSON,
    MessageJSON,
    ModelJSON,
    SummaryJSON,
    ToolPartJSON,
)
from server.types.chunks import ApprovalJSON, DecisionJSON, OverdueAnswerJSON, OverdueJSON
from server.types.keys import required_keys

T = TypeVar("T")

# Each shape's required keys, read from its TypedDict: a field added there is checked here.
CONVERSATION_KEYS = required_keys(ConversationJSON)
MODEL_KEYS = required_keys(ModelJSON)
CITATION_KEYS = required_keys(CitationPartJSON)
APPROVAL_KEYS = required_keys(ApprovalJSON)
DECISION_KEYS = required_keys(DecisionJSON)
OVERDUE_KEYS = required_keys(OverdueJSON)
OVERDUE_ANSWER_KEYS = required_keys(OverdueAnswerJSON)
STEP_KEYS = required_keys(ToolPartJSON)
SUMMARY_KEYS = required_keys(SummaryJSON)
CONTEXT_KEYS = required_keys(ContextJSON)
MESSAGE_KEYS = required_keys(MessageJSON)


def shaped(kind: type[T], keys: tuple[str, ...], value: object) -> T:
    """`value` as `kind`, once it is an object with `keys` and, when `kind` is a TypedDict,
    every key it requires (the server's own shapes; a check that catches a wrong server or
    version, not a full validation)."""
    if not isinstance(value, dict) or not all(key in value for key in (*_required(kind), *keys)):
        raise ClientError(f"the server's answer is not a {kind.__name__}")
    return cast(T, value)


_REQUIRED: dict[type, tuple[str, ...]] = {}  # read once per shape: a stream checks many


def _required(kind: type) -> tuple[str, ...]:
    if kind not in _REQUIRED:
        _REQUIRED[kind] = required_keys(kind) if is_typeddict(kind) else ()
    return _REQUIRED[kind]


def error_from(status: int, raw: bytes) -> ClientError:
    try:
        error = json.loads(raw)["error"]
        return ClientError(str(error["message"]), status=status, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        return ClientError(f"the server answered HTTP {status}", status=status)
