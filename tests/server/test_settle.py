"""The settle completes under the conditions that break naive cleanup code."""

from __future__ import annotations

import sqlite3
import threading
import time

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def hold_write_lock(db_path: str, seconds: float) -> threading.Event:
    """Another connection holds SQLite's write lock for `seconds` (a real slow/contended DB)."""
    held = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db_path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    threading.Thread(target=hold, daemon=True).start()
    assert held.wait(5)
    return held


def test_settle_completes_with_a_contended_lease_and_a_slow_database(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=4)
    holder_conversation = parley.new_conversation()
    holder = parley.send(holder_conversation)
    delivered = holder.read_until(lambda text: text == "t0 t1 t2 t3 ")

    # A second turn waits for the model: the lease is contended.
    waiting_conversation = parley.new_conversation()
    waiting = parley.send(waiting_conversation)
    waiting_id = waiting.first["message_id"]
    upstream.wait_for(lambda: parley.status()["models"][0]["queue_length"] == 1)

    # The database is locked by another writer for a while: the final write must wait.
    hold_write_lock(str(parley.settings.db_path), 1.0)
    holder.hang_up()

    # The model goes to the waiting turn as soon as the work stopped, not after the write.
    upstream.wait_for(lambda: len(upstream.records) == 2)
    message = parley.wait_settled(holder_conversation, holder.first["message_id"])
    assert message["content"] == delivered
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")

    waiting.read_until(lambda text: text == "t0 t1 t2 t3 ")
    waiting.hang_up()
    assert parley.wait_settled(waiting_conversation, waiting_id)["status"] == "interrupted"
    parley.wait_idle()


def test_reply_is_checkpointed_while_the_upstream_is_silent(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    delivered = stream.read_until(lambda text: text == "t0 t1 t2 ")
    message_id = stream.first["message_id"]

    def stored() -> str:
        conn = sqlite3.connect(f"file:{parley.settings.db_path}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT content, status FROM messages WHERE id = ?", (message_id,)
            ).fetchone()
        finally:
            conn.close()
        assert row[1] == "streaming"
        return str(row[0])

    # No further token arrives, yet the text reaches the disk (the checkpoint timer).
    upstream.wait_for(lambda: stored() == delivered, timeout=3)
    stream.hang_up()
    parley.wait_settled(conversation_id, message_id)


def test_second_message_while_streaming_is_a_conflict(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=1)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_until(lambda text: text == "t0 ")

    reply = parley.call(
        "POST", f"/api/conversations/{conversation_id}/messages", json_body={"content": "more"}
    )
    assert reply.status == 409
    assert reply.json()["error"]["code"] == "reply_in_progress"
    # Nothing was written for the refused message.
    assert len(parley.conversation(conversation_id)["messages"]) == 2

    stream.hang_up()
    parley.wait_settled(conversation_id, stream.first["message_id"])
    parley.wait_idle()


def test_model_sees_the_stored_conversation_plus_the_new_message(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2)
    conversation_id = parley.new_conversation(system="Be brief.")
    parley.send(conversation_id, "first question").read_all()
    parley.send(conversation_id, "second question").read_all()

    assert upstream.records[1].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "t0 t1 "},
        {"role": "user", "content": "second question"},
    ]
    assert upstream.records[1].body["stream"] is True
    assert upstream.records[1].body["model"] == "scripted"
