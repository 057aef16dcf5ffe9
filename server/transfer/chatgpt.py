"""ChatGPT's export (`conversations.json`, in the zip of "Export data") as Parley's chats.

Each ChatGPT conversation is a tree: `mapping` holds nodes `{id, message, parent, children}`
and `current_node` is the leaf of the branch that was shown. Parley keeps the user's and the
assistant's messages with text, every branch of them, and the shown branch selected. Nodes
with no message, system and tool messages, hidden ones and parts that are not text (images,
null) are left out; a kept message follows its nearest kept ancestor. A conversation left
with no message is skipped, and said so (`Skipped`): it would import as an empty chat.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from server.errors import BadImport
from server.transfer.parley import Conversation, Message, is_number
from server.transfer.sameness import chatgpt_origin
from server.transfer.text import checked_text

NO_MESSAGE = "it has no message Parley keeps (text of the user's or the assistant's)"


@dataclass(frozen=True)
class Skipped:
    """A conversation of the file that was not imported, and why."""

    index: int  # its place in the file's list
    title: str
    reason: str


def conversation(item: object, where: str, max_chars: int) -> Conversation:
    """One ChatGPT conversation as Parley's, checked; with no message when none is kept
    (the caller skips it, saying so)."""
    if not isinstance(item, dict):
        raise BadImport(where, "must be an object (a ChatGPT conversation)")
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise BadImport(f"{where}.mapping", "must be an object (ChatGPT's message tree)")
    created = _time(item.get("create_time"), 0.0)
    nodes: dict[str, dict[str, Any]] = {}
    for key, node in mapping.items():
        if not isinstance(node, dict):
            raise BadImport(f"{where}.mapping.{key}", "must be an object")
        parent = node.get("parent")
        if parent is not None and (not isinstance(parent, str) or parent not in mapping):
            raise BadImport(f"{where}.mapping.{key}.parent", "must name a node of the mapping")
        nodes[key] = node
    ids: dict[str, str] = {}  # node -> the message it is, or the nearest kept above it
    messages: list[Message] = []
    for key in _parents_first(nodes, where):
        node = nodes[key]
        parent = node.get("parent")
        above = ids.get(parent) if isinstance(parent, str) else None
        message = _message(node.get("message"), f"{where}.mapping.{key}.message", max_chars)
        if message is None:
            if above is not None:
                ids[key] = above
            continue
        message.parent_id = above
        message.created_at = message.created_at or created
        ids[key] = message.id
        messages.append(message)
    current = item.get("current_node")
    leaf = ids.get(current) if isinstance(current, str) else None
    title = item.get("title")
    fingerprint = [title, created, [(m.role, m.content, m.created_at) for m in messages]]
    return Conversation(
        id=uuid.uuid4().hex,
        title=checked_text(title, f"{where}.title", max_chars) if isinstance(title, str) else "",
        model=None,
        system=None,
        tools=True,
        documents=False,
        params={},
        tool_servers=None,
        leaf_id=leaf or (messages[-1].id if messages else None),
        created_at=created,
        updated_at=_last_activity(item.get("update_time"), created, messages),
        messages=messages,
        origin=chatgpt_origin(item.get("conversation_id") or item.get("id"), fingerprint),
    )


def _last_activity(update_time: object, created: float, messages: list[Message]) -> float:
    """Where the chat sorts among the others (by its last activity, as Parley's own): the
    latest of its times; with none at all (0: 1970, the bottom of the list), the import's."""
    latest = max([_time(update_time, 0.0), created, *(m.created_at for m in messages)])
    return latest if latest > 0 else time.time()


def _parents_first(nodes: dict[str, dict[str, Any]], where: str) -> list[str]:
    """The nodes, each after its parent; siblings by time (ChatGPT's order when equal)."""
    children: dict[str | None, list[str]] = {}
    for key, node in nodes.items():
        children.setdefault(node.get("parent"), []).append(key)
    order: list[str] = []
    pending = sorted(children.get(None, []), key=lambda k: _when(nodes[k]), reverse=True)
    while pending:
        key = pending.pop()
        order.append(key)
        below = sorted(children.get(key, []), key=lambda k: _when(nodes[k]), reverse=True)
        pending.extend(below)
        if len(order) > len(nodes):
            break
    if len(order) != len(nodes):
        raise BadImport(f"{where}.mapping", "its parents form a loop, or have no root")
    return order


def _when(node: dict[str, Any]) -> float:
    message = node.get("message")
    return _time(message.get("create_time"), 0.0) if isinstance(message, dict) else 0.0


def _message(value: object, where: str, max_chars: int) -> Message | None:
    """The message of a node, or None when Parley leaves it out."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadImport(where, "must be an object or null")
    author = value.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation"):
        return None
    content = value.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if isinstance(content, dict) and parts is None and isinstance(content.get("text"), str):
        parts = [content["text"]]  # e.g. a code block of the assistant's
    if not isinstance(parts, list):
        return None
    text = "\n".join(part for part in parts if isinstance(part, str))
    if not text.strip():
        return None
    created = _time(value.get("create_time"), 0.0)
    model = metadata.get("model_slug")
    return Message(
        id=uuid.uuid4().hex,
        parent_id=None,
        role=role,
        content=checked_text(text, f"{where}.content", max_chars),
        parts=None,
        status="completed",
        ended_by=None,
        error=None,
        model=model if isinstance(model, str) and role == "assistant" else None,
        created_at=created,
        completed_at=created or None,
        usage=None,
        continued=None,
    )


def _time(value: object, default: float) -> float:
    return float(value) if is_number(value) else default  # type: ignore[arg-type]
