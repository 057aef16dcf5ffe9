"""Tool steps inside stored replies' parts (and inside their sub-agents' parts): marked
interrupted when a crash cut them, and found by call id (a decision on a call of an ended
turn is a 409, not a 404)."""

from __future__ import annotations

import json
import sqlite3

from server.storage.transaction import transaction
from server.types import MAX_AGENT_DEPTH, NOT_APPROVED_AT_CRASH


def recover_crashed(conn: sqlite3.Connection, now: float) -> int:
    # The last checkpoint time is the honest "completed_at" of a reply cut by a crash.
    with transaction(conn):
        # A tool step still running when the app died was cut by the crash too; one awaiting
        # approval never ran, and never will: a decision after the restart is a 409.
        for message_id, stored, ended in conn.execute(
            "SELECT id, parts, updated_at FROM messages "
            "WHERE status = 'streaming' AND parts IS NOT NULL"
        ).fetchall():
            conn.execute(
                "UPDATE messages SET parts = ? WHERE id = ?",
                (_interrupt_steps(stored, ended), message_id),
            )
        cursor = conn.execute(
            "UPDATE messages SET status = 'interrupted', ended_by = 'crash', "
            "completed_at = updated_at WHERE status = 'streaming'"
        )
    return cursor.rowcount


def _interrupt_steps(stored: str, ended_at: float) -> str:
    """Parts JSON with every `running` (or `awaiting_approval`) tool step marked
    `interrupted` at `ended_at`."""
    try:
        parts = json.loads(stored)
    except ValueError:
        return stored  # not ours to repair: left as it is
    _interrupt(parts, ended_at)
    return json.dumps(parts, ensure_ascii=False)


def _interrupt(parts: object, ended_at: float, depth: int = 0) -> None:
    """Mark open steps interrupted, a sub-agent's own steps (its `agent.parts`) too."""
    for part in parts if isinstance(parts, list) and depth < MAX_AGENT_DEPTH else []:
        if not (isinstance(part, dict) and part.get("type") == "tool"):
            continue
        agent = part.get("agent")
        if isinstance(agent, dict):
            _interrupt(agent.get("parts"), ended_at, depth + 1)
        if part.get("status") == "running":
            part["status"], part["ended_at"] = "interrupted", ended_at
        elif part.get("status") == "awaiting_approval":
            part["status"], part["ended_at"] = "interrupted", ended_at
            part["result"] = NOT_APPROVED_AT_CRASH
        _cancel_questions(part.get("questions"), ended_at)


def _cancel_questions(questions: object, ended_at: float) -> None:
    """A question its server asked that was still waiting for the user was never answered."""
    for question in questions if isinstance(questions, list) else []:
        if isinstance(question, dict) and question.get("state") == "asked":
            question["state"], question["answered_at"] = "cancel", ended_at


def has_tool_step(conn: sqlite3.Connection, cid: str, call_id: str) -> bool:
    needle = json.dumps(call_id, ensure_ascii=False)  # as the parts JSON spells it
    rows = conn.execute(
        "SELECT parts FROM messages WHERE conversation_id = ? AND parts IS NOT NULL "
        "AND instr(parts, ?) > 0",
        (cid, needle),
    )
    for (stored,) in rows:
        try:
            parts = json.loads(stored)
        except ValueError:
            continue
        if _has_step(parts, call_id):
            return True
    return False


def _has_step(parts: object, call_id: str, depth: int = 0) -> bool:
    """A tool step with this id among `parts`, or among a sub-agent's parts."""
    for part in parts if isinstance(parts, list) and depth < MAX_AGENT_DEPTH else []:
        if not (isinstance(part, dict) and part.get("type") == "tool"):
            continue
        agent = part.get("agent")
        if part.get("id") == call_id or (
            isinstance(agent, dict) and _has_step(agent.get("parts"), call_id, depth + 1)
        ):
            return True
    return False
