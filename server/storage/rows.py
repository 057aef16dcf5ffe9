"""Stored rows as the JSON the API serves (server/types)."""

from __future__ import annotations

import json
import sqlite3

from server.storage import attachments
from server.storage import params as chat_params
from server.types import ConversationJSON, MessageJSON, PartJSON


def conversation_json(row: sqlite3.Row) -> ConversationJSON:
    return {
        "id": row["id"],
        "title": row["title"],
        "model": row["model"],
        "system": row["system"],
        "tools": bool(row["tools"]),
        "tool_servers": json.loads(row["tool_servers"]) if row["tool_servers"] else None,
        "documents": bool(row["documents"]),
        "params": chat_params.decode(row["params"]),
        "leaf_id": row["leaf_id"],
        "project_id": row["project_id"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def message_json(row: sqlite3.Row) -> MessageJSON:
    usage = row["usage"]
    stored = row["parts"]
    parts: list[PartJSON] = (
        json.loads(stored) if stored else [{"type": "text", "text": row["content"]}]
    )
    found: MessageJSON = {
        "id": row["id"],
        "conversation_id": row["conversation_id"],
        "role": row["role"],
        "content": row["content"],
        "parts": parts,
        "status": row["status"],
        "ended_by": row["ended_by"],
        "error": row["error"],
        "model": row["model"],
        "created_at": row["created_at"],
        "completed_at": row["completed_at"],
        "usage": json.loads(usage) if usage else None,
        "parent_id": row["parent_id"],
        "continued": row["continued"],
        "finish_reason": row["finish_reason"],
    }
    ended = row["ended"]
    if ended:
        found["ended"] = json.loads(ended)
    stored_files = row["attachments"]
    if stored_files:
        found["attachments"] = [attachments.public(a) for a in attachments.of_message(stored_files)]
    return found
