"""Conversations into Parley: its own JSON export (server/transfer/export.py) or ChatGPT's
`conversations.json` (server/transfer/chatgpt.py), all or nothing.

Each conversation is checked here as the file is read (server/transfer/reading.py); the
first problem is a 400 that says where it is ("conversations[3].messages[12].role: must be
'user' or 'assistant'"), and nothing is imported (server/transfer/jobs.py stages and drops).
Ids are kept when they are free; a conversation whose id (or one of whose messages' ids) is
taken already gets new ones (server/transfer/staging.py), so a chat imported again as a copy
(server/transfer/sameness.py) never overwrites one. Attachments always get new ones, never
the data dir's (server/transfer/attachments.py).
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, field
from typing import Any, get_args

from server.errors import BadImport, ParleyError
from server.limits import TransferLimits
from server.storage import params as chat_params
from server.storage.stored_steps import interrupt_open_steps
from server.transfer import attachments
from server.transfer.step_consent import check_consent
from server.transfer.text import checked_text
from server.types import (
    MAX_AGENT_DEPTH,
    ChatParams,
    Continued,
    EndedBy,
    FinishReason,
    MessageRole,
    Status,
    ToolStatus,
)

# The values a file may hold, read from the wire's own literals.
ROLES: tuple[str, ...] = get_args(MessageRole)
STATUSES: tuple[str, ...] = get_args(Status)
ENDED_BY: tuple[str, ...] = get_args(EndedBy)
CONTINUED: tuple[str, ...] = get_args(Continued)
FINISH_REASONS: tuple[str, ...] = get_args(FinishReason)
PART_TYPES = ("text", "tool", "citation")
TOOL_STATUSES: tuple[str, ...] = get_args(ToolStatus)


@dataclass
class Message:
    id: str
    parent_id: str | None
    role: str
    content: str
    parts: list[dict[str, Any]] | None  # None: its content is its one text part
    status: str
    ended_by: str | None
    error: str | None
    model: str | None
    created_at: float
    completed_at: float | None
    usage: dict[str, Any] | None
    continued: str | None
    finish_reason: str | None = None
    ended: dict[str, Any] | None = None  # a stopped reply: what the stop ended
    # A user message's files as stored with it (their bytes are its conversation's `files`).
    attachments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Summary:
    """A summary compaction wrote (server/storage/summaries.py), as exported."""

    id: str
    through_id: str
    content: str
    model: str | None
    created_at: float
    updated_at: float


@dataclass
class Conversation:
    id: str
    title: str
    model: str | None
    system: str | None
    tools: bool
    documents: bool
    params: ChatParams
    tool_servers: list[str] | None
    leaf_id: str | None
    created_at: float
    updated_at: float
    messages: list[Message] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    files: attachments.Carried = field(default_factory=attachments.Carried)
    origin: str = ""  # the chat it is, wherever it is (server/transfer/sameness.py)
    project_ref: str | None = None  # the file's id of its project (server/transfer/projects.py)


def parley_conversation(
    item: object, where: str, max_chars: int, max_reply_tokens: int
) -> Conversation:
    """One conversation of Parley's export, checked (`max_reply_tokens`: the highest
    `params.max_tokens`); `where` names it in a BadImport ("conversations[3]")."""
    if not isinstance(item, dict):
        raise BadImport(where, "must be an object")
    raw_messages = item.get("messages")
    if not isinstance(raw_messages, list):
        raise BadImport(f"{where}.messages", "must be a list")
    messages: list[Message] = []
    seen: set[str] = set()
    files = attachments.Carried()
    for index, raw in enumerate(raw_messages):
        message = _message(raw, f"{where}.messages[{index}]", max_chars, files)
        if message.id in seen:
            raise BadImport(f"{where}.messages[{index}].id", "appears twice")
        if message.parent_id is not None and message.parent_id not in seen:
            raise BadImport(
                f"{where}.messages[{index}].parent_id",
                "must name a message listed before it in the same conversation",
            )
        seen.add(message.id)
        messages.append(message)
    leaf = _optional_text(item, "leaf_id", where, TransferLimits.id_chars)
    if leaf is not None and leaf not in seen:
        raise BadImport(f"{where}.leaf_id", "must name one of its messages")
    try:
        params = chat_params.updated_params({}, item.get("params") or {}, max_reply_tokens)
    except ParleyError as exc:
        raise BadImport(f"{where}.params", str(exc)) from exc
    created = _time(item, "created_at", where)
    conversation_id = _id(item, "id", where)
    return Conversation(
        id=conversation_id,
        title=_text(item, "title", where, max_chars),
        model=_optional_text(item, "model", where, max_chars),
        system=_optional_text(item, "system", where, max_chars),
        tools=_bool(item, "tools", where, True),
        documents=_bool(item, "documents", where, False),
        params=params,
        tool_servers=_names(item.get("tool_servers"), f"{where}.tool_servers"),
        leaf_id=leaf if leaf is not None else (messages[-1].id if messages else None),
        created_at=created,
        updated_at=_time(item, "updated_at", where, created),
        messages=messages,
        summaries=_summaries(item.get("summaries"), seen, f"{where}.summaries", max_chars),
        files=files,
        origin=_optional_text(item, "origin", where, TransferLimits.id_chars) or conversation_id,
        project_ref=_optional_text(item, "project_id", where, TransferLimits.id_chars),
    )


def _names(value: object, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(name, str) and 0 < len(name) <= 64 for name in value
    ):
        raise BadImport(where, "must be null or a list of MCP servers' names")
    return list(value)


def _summaries(value: object, ids: set[str], where: str, max_chars: int) -> list[Summary]:
    """Compaction's summaries: each must end at one of the conversation's
    messages."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadImport(where, "must be a list")
    found = []
    for index, raw in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(raw, dict):
            raise BadImport(at, "must be an object")
        through = _text(raw, "through_id", at, TransferLimits.id_chars)
        if through not in ids:
            raise BadImport(f"{at}.through_id", "must name one of the conversation's messages")
        created = _time(raw, "created_at", at)
        found.append(
            Summary(
                id=_id(raw, "id", at) if raw.get("id") is not None else uuid.uuid4().hex,
                through_id=through,
                content=_text(raw, "content", at, max_chars),
                model=_optional_text(raw, "model", at, max_chars),
                created_at=created,
                updated_at=_time(raw, "updated_at", at, created),
            )
        )
    return found


def _message(raw: object, where: str, max_chars: int, files: attachments.Carried) -> Message:
    if not isinstance(raw, dict):
        raise BadImport(where, "must be an object")
    role = raw.get("role")
    if role not in ROLES:
        raise BadImport(f"{where}.role", "must be 'user' or 'assistant'")
    status = raw.get("status", "completed")
    if status not in STATUSES:
        raise BadImport(f"{where}.status", f"must be one of {', '.join(STATUSES)}")
    ended_by = raw.get("ended_by")
    if ended_by is not None and ended_by not in ENDED_BY:
        raise BadImport(f"{where}.ended_by", f"must be null or one of {', '.join(ENDED_BY)}")
    continued = raw.get("continued")
    if continued is not None and continued not in CONTINUED:
        raise BadImport(f"{where}.continued", "must be null, 'prefix' or 'fallback'")
    finish_reason = raw.get("finish_reason")
    if finish_reason is not None and finish_reason not in FINISH_REASONS:
        raise BadImport(
            f"{where}.finish_reason", f"must be null or one of {', '.join(FINISH_REASONS)}"
        )
    content = _text(raw, "content", where, max_chars)
    usage = _usage(raw.get("usage"), f"{where}.usage")
    if status == "streaming":  # exported mid-reply: it was cut there
        status, ended_by = "interrupted", ended_by or "crash"
    created_at = _time(raw, "created_at", where)
    completed_at = _optional_time(raw, "completed_at", where)
    parts = _parts(raw.get("parts"), content, f"{where}.parts", max_chars)
    # A step the file holds as still open was cut when its reply was: marked as a crash
    # leaves it, by the same rule, ended when the reply did (or, unknown, when it began).
    interrupt_open_steps(parts, completed_at if completed_at is not None else created_at)
    stored = (
        files.add(raw.get("attachments"), f"{where}.attachments", created_at)
        if role == "user"
        else []
    )
    return Message(
        id=_id(raw, "id", where),
        parent_id=_optional_text(raw, "parent_id", where, TransferLimits.id_chars),
        role=role,
        content=content,
        parts=parts,
        status=status,
        ended_by=ended_by,
        error=_optional_text(raw, "error", where, max_chars),
        model=_optional_text(raw, "model", where, max_chars),
        created_at=created_at,
        completed_at=completed_at,
        usage=usage,
        continued=continued,
        finish_reason=finish_reason if status == "completed" else None,
        ended=_ended(raw.get("ended"), f"{where}.ended", max_chars)
        if status == "interrupted"
        else None,
        attachments=stored,
    )


def _ended(value: object, where: str, max_chars: int) -> dict[str, Any] | None:
    """A stop's receipt as the server writes it (server.types.EndedJSON)."""
    if value is None:
        return None
    counts = ("model_calls", "tool_calls", "sub_agents", "approvals")
    if not isinstance(value, dict) or not all(_whole(value.get(key)) for key in counts):
        raise BadImport(where, f"must be null or an object with whole {', '.join(counts)}")
    acted = value.get("may_have_acted")
    if not isinstance(acted, list):
        raise BadImport(f"{where}.may_have_acted", "must be a list")
    for index, call in enumerate(acted):
        if not isinstance(call, dict):
            raise BadImport(f"{where}.may_have_acted[{index}]", "must be an object")
        for key in ("server", "name", "arguments"):
            _text(call, key, f"{where}.may_have_acted[{index}]", max_chars)
    _encodable(value, where)
    return value


def _questions(value: object, where: str, max_chars: int) -> None:
    """A step's questions from its MCP server."""
    if value is None:
        return
    if not isinstance(value, list):
        raise BadImport(where, "must be a list")
    for index, question in enumerate(value):
        if not isinstance(question, dict):
            raise BadImport(f"{where}[{index}]", "must be an object")
        for key in ("id", "message"):
            _text(question, key, f"{where}[{index}]", max_chars)


def _usage(value: object, where: str) -> dict[str, Any] | None:
    """A reply's usage as the server writes it (server/turns/ending.py): counts and timings,
    and flags such as `completion_tokens_estimated: true` (counted by deltas: every stopped
    reply, and an upstream's that reported no usage)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        is_number(v) or isinstance(v, bool) for v in value.values()
    ):
        raise BadImport(where, "must be null or an object of numbers (or true/false)")
    for key in value:
        checked_text(key, f"{where}.{key}", TransferLimits.id_chars)
    return value


def _parts(value: object, content: str, where: str, max_chars: int) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise BadImport(where, "must be a list")
    for index, part in enumerate(value):
        _part(part, f"{where}[{index}]", max_chars)
        _encodable(part, f"{where}[{index}]")
    if value == [{"type": "text", "text": content}]:
        return None  # stored as its content alone, as Parley itself stores it
    return value


def _part(part: object, where: str, max_chars: int, depth: int = 0) -> None:
    """A part as the window draws it: every key it reads, of the right kind (more keys are
    kept as they are); a sub-agent's parts (`agent.parts`) are parts too, a few levels
    deep."""
    if not isinstance(part, dict) or part.get("type") not in PART_TYPES:
        raise BadImport(where, "must be an object of type text, tool or citation")
    if part["type"] == "text":
        _text(part, "text", where, max_chars)
    elif part["type"] == "tool":
        for key in ("id", "server", "name", "arguments"):
            _text(part, key, where, max_chars)
        if part.get("status") not in TOOL_STATUSES:
            raise BadImport(f"{where}.status", f"must be one of {', '.join(TOOL_STATUSES)}")
        _optional_text(part, "result", where, max_chars)
        _time(part, "started_at", where)
        _optional_time(part, "ended_at", where)
        if part.get("agent") is not None:
            _agent(part["agent"], f"{where}.agent", max_chars, depth)
        _questions(part.get("questions"), f"{where}.questions", max_chars)
        check_consent(part, where, max_chars)
    else:
        if not _whole(part.get("n")) or (part.get("page") is not None and not _whole(part["page"])):
            raise BadImport(f"{where}.n", "must be a whole number (and `page` null or one)")
        lines = part.get("lines")
        if lines is not None and not (
            isinstance(lines, list) and len(lines) == 2 and all(_whole(n) for n in lines)
        ):
            raise BadImport(f"{where}.lines", "must be null or [first, last]")
        _text(part, "path", where, max_chars)
        _text(part, "quote", where, max_chars)


def _agent(agent: object, where: str, max_chars: int, depth: int) -> None:
    if depth >= MAX_AGENT_DEPTH:
        raise BadImport(where, f"sub-agents nest deeper than {MAX_AGENT_DEPTH} levels")
    if not isinstance(agent, dict) or not isinstance(agent.get("parts"), list):
        raise BadImport(where, "must be an object with a list of `parts`")
    _text(agent, "task", where, max_chars)
    _text(agent, "model", where, max_chars)
    _optional_text(agent, "instructions", where, max_chars)
    for index, part in enumerate(agent["parts"]):
        _part(part, f"{where}.parts[{index}]", max_chars, depth + 1)


def _encodable(part: dict[str, Any], where: str) -> None:
    """Keys the window does not read are kept as they are, so the whole part must be text
    SQLite takes (JSON's `\\ud800` is a lone surrogate, which it refuses)."""
    try:
        json.dumps(part, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadImport(where, "contains an unpaired surrogate") from exc


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _id(item: dict[str, Any], key: str, where: str) -> str:
    value = _text(item, key, where, TransferLimits.id_chars)
    if not value:
        raise BadImport(f"{where}.{key}", "must not be empty")
    return value


def _text(item: dict[str, Any], key: str, where: str, max_chars: int) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise BadImport(f"{where}.{key}", "must be a string")
    return checked_text(value, f"{where}.{key}", max_chars)


def _optional_text(item: dict[str, Any], key: str, where: str, max_chars: int) -> str | None:
    if item.get(key) is None:
        return None
    return _text(item, key, where, max_chars)


def _bool(item: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = item.get(key, default)
    if not isinstance(value, bool):
        raise BadImport(f"{where}.{key}", "must be true or false")
    return value


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _time(item: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    value = item.get(key, default)
    if not is_number(value):
        raise BadImport(f"{where}.{key}", "must be a time (seconds since 1970)")
    assert isinstance(value, int | float)
    return float(value)


def _optional_time(item: dict[str, Any], key: str, where: str) -> float | None:
    return None if item.get(key) is None else _time(item, key, where)
