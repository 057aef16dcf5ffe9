"""Tool steps inside stored replies' parts (and inside their sub-agents' parts): marked
interrupted when their reply ended while they were open (`interrupt_open_steps`: a crash, or
an export made mid-reply and imported), and found by call id (a decision on a call of an
ended turn is a 409, not a 404)."""

from __future__ import annotations

import json
import sqlite3

from server.storage.transaction import transaction
from server.types import MAX_AGENT_DEPTH, NOT_APPROVED_AT_CRASH, OPEN_STATUSES


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
    interrupt_open_steps(parts, ended_at)
    return json.dumps(parts, ensure_ascii=False)


def interrupt_open_steps(parts: object, ended_at: float, depth: int = 0) -> None:
    """Mark, in place, every tool step of a reply that ended while it was open as
    `interrupted` at `ended_at` (never before it started), a sub-agent's own steps (its
    `agent.parts`) too. A step awaiting approval never ran, and never will: a decision after
    this is a 409. Parts that are not JSON objects are left as they are."""
    for part in parts if isinstance(parts, list) and depth < MAX_AGENT_DEPTH else []:
        if not (isinstance(part, dict) and part.get("type") == "tool"):
            continue
        agent = part.get("agent")
        if isinstance(agent, dict):
            interrupt_open_steps(agent.get("parts"), ended_at, depth + 1)
        status = part.get("status")
        if status in OPEN_STATUSES:
            part["status"] = "interrupted"
            part["ended_at"] = _not_before(part.get("started_at"), ended_at)
        if status == "awaiting_approval":
            part["result"] = NOT_APPROVED_AT_CRASH
        _cancel_questions(part.get("questions"), ended_at)


def _cancel_questions(questions: object, ended_at: float) -> None:
    """A question its server asked that was still waiting for the user was never answered."""
    for question in questions if isinstance(questions, list) else []:
        if isinstance(question, dict) and question.get("state") == "asked":
            question["state"] = "cancel"
            question["answered_at"] = _not_before(question.get("asked_at"), ended_at)


def _not_before(start: object, end: float) -> float:
    """`end`, or `start` when that is later (a time a file gives may not be exact)."""
    if isinstance(start, (int, float)) and not isinstance(start, bool) and start > end:
        return float(start)
    return end


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
