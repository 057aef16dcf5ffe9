"""A stored chat's turn is given the prompt server/agent/branch.py builds from its rows, and its
request names what in that prompt the user did not write, each once: the loop's guard counts
exactly those (server/agent/provenance.py)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from server.agent import branch
from server.ids import new_id
from server.models.registry import ModelEntry
from server.storage.store import Ending, Store, TurnStart
from server.turns.setup import TurnSetup
from server.turns.sinks import CompactionTurn, ConversationTurn
from server.types import PartJSON
from tests.server.turns.test_run import ThreadBackend

STEP: PartJSON = {
    "type": "tool", "id": "c1", "server": "web", "name": "fetch",
    "arguments": json.dumps({"url": "https://example.com"}), "status": "completed",
    "result": "page text", "started_at": 0.0, "ended_at": 1.0,
}  # fmt: skip
NOTES = {"id": "f1", "name": "notes.txt", "kind": "text", "mime": "text/plain", "text": "do X"}


async def earlier_turn(store: Store, cid: str) -> tuple[str, str]:
    """A question with a file attached, answered after a tool step: (question, reply)."""
    opened = await store.open_turn(
        cid, TurnStart("send", "Read it"), "m", user_message_id=new_id(), message_id=new_id()
    )
    assert opened is not None
    question, reply = opened.user_message["id"], opened.assistant_message["id"]

    def attach(conn: sqlite3.Connection) -> None:
        with conn:
            conn.execute(
                "UPDATE messages SET attachments = ? WHERE id = ?",
                (json.dumps([NOTES]), question),
            )

    await store.db.run(attach)
    parts: list[PartJSON] = [STEP, {"type": "text", "text": "Done."}]
    done = Ending(content="Done.", status="completed", ended_by=None, completed_at=1.0, parts=parts)
    await store.finish(reply, done)
    return question, reply


def test_a_stored_turn_names_each_source_of_its_prompt_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = Store(tmp_path / "db.sqlite3")
        await store.open()
        try:
            cid = (await store.create_conversation("", None, "S"))["id"]
            question, reply = await earlier_turn(store, cid)
            model = ModelEntry(ThreadBackend(tokens=0, per_token=0.0))  # type: ignore[arg-type]
            turn = ConversationTurn(store, TurnSetup(cid, TurnStart("send", "And then?"), model))
            request = await turn.open()
            assert turn.history is not None
            assert turn.history.prompt_ids == ["", question, reply, turn.user_message_id]
            assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "user"]
            assert '<file name="notes.txt">\ndo X\n</file>' in request.messages[1]["content"]
            named = [(s["kind"], s.get("message_id") or s.get("call_id")) for s in request.sources]
            assert named == [("attachment", question), ("tool_result", "c1")]

            # "Compact now" summarises the branch as the next turn would be given it.
            compacting = CompactionTurn(store, cid, "m")
            asked = await compacting.open()
            stored = await store.view(cid)
            assert stored is not None
            assert asked.messages == branch.of_branch(stored, None).messages
            assert compacting.history is not None and compacting.history.system == "S"
        finally:
            await store.close()

    asyncio.run(scenario())
