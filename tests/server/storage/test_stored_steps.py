"""One rule for a tool step still open when its reply ended: a crash found at the next start
and an export made mid-reply, once imported, leave the same parts."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

from server.storage.migrations import migrate
from server.storage.stored_steps import recover_crashed
from server.transfer.parley import parley_conversation
from server.types import NOT_APPROVED_AT_CRASH

STARTED, ENDED = 1_000.0, 1_050.0


def step(call_id: str, status: str, **more: Any) -> dict[str, Any]:
    return {
        "type": "tool", "id": call_id, "server": "files", "name": "read", "arguments": "{}",
        "status": status, "result": None, "started_at": STARTED, "ended_at": None, **more,
    }  # fmt: skip


def open_parts() -> list[dict[str, Any]]:
    asked = {"id": "q1", "mode": "form", "message": "Which?", "state": "asked",
             "asked_at": STARTED + 1, "answered_at": None}  # fmt: skip
    child = {"task": "look", "instructions": None, "model": "m", "parts": [step("c1", "running")]}
    return [
        {"type": "text", "text": "Let me look. "},
        step("a1", "running", questions=[asked]),
        step("a2", "awaiting_approval"),
        step("a3", "completed", result="done", ended_at=STARTED + 2),
        step("a4", "running", agent=child),
    ]


def after_a_crash(tmp_path: Path, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    conn = sqlite3.connect(tmp_path / "chats.db", isolation_level=None)
    try:
        migrate(conn)
        conn.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c', '', 0, 0)"
        )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, status, created_at, "
            "updated_at, parts) VALUES ('m', 'c', 'assistant', 'Let me look. ', 'streaming', "
            "?, ?, ?)",
            (STARTED, ENDED, json.dumps(parts)),
        )
        assert recover_crashed(conn, ENDED + 99) == 1
        (stored,) = conn.execute("SELECT parts FROM messages WHERE id = 'm'").fetchone()
        return json.loads(stored)  # type: ignore[no-any-return]
    finally:
        conn.close()


def after_an_import(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    reply = {
        "id": "m", "role": "assistant", "content": "Let me look. ", "status": "streaming",
        "created_at": STARTED, "completed_at": ENDED, "parts": parts,
    }  # fmt: skip
    item = {"id": "c", "title": "", "created_at": 0, "messages": [reply]}
    (message,) = parley_conversation(item, "conversations[0]", 100_000, 4096).messages
    assert message.parts is not None
    return message.parts


def test_a_crash_and_an_import_interrupt_open_steps_alike(tmp_path: Path) -> None:
    crashed = after_a_crash(tmp_path, open_parts())
    imported = after_an_import(open_parts())
    assert crashed == imported
    running, waiting, done, parent = crashed[1:]
    assert (running["status"], running["ended_at"]) == ("interrupted", ENDED)
    assert running["questions"][0] == {
        **open_parts()[1]["questions"][0], "state": "cancel", "answered_at": ENDED
    }  # fmt: skip
    assert (waiting["status"], waiting["result"]) == ("interrupted", NOT_APPROVED_AT_CRASH)
    assert done == open_parts()[3]
    assert parent["agent"]["parts"][0]["status"] == "interrupted"


def test_a_step_is_never_ended_before_it_began() -> None:
    parts = copy.deepcopy(open_parts())
    for part in parts[1:]:
        part["started_at"] = ENDED + 10
    imported = after_an_import(parts)
    assert imported[1]["ended_at"] == ENDED + 10
