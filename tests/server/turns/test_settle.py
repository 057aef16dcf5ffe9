"""The settle completes under the conditions that break naive cleanup code."""

from __future__ import annotations

from server.settings import Limits
from tests.support.database import stored_status, write_lock_held
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

SHORTER_THAN_A_WRITE = Limits().db_busy_timeout / 2


def test_settle_completes_with_a_contended_lease_and_a_slow_database(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=4)
    holder_conversation = parley.new_conversation()
    holder = parley.send(holder_conversation)
    delivered = holder.read_until(lambda text: text == "t0 t1 t2 t3 ")
    holder_id = holder.first["message_id"]

    # A second turn waits for the model: the lease is contended.
    waiting_conversation = parley.new_conversation()
    waiting = parley.send(waiting_conversation)
    waiting_id = waiting.first["message_id"]
    upstream.wait_for(lambda: parley.status()["models"][0]["queue_length"] == 1)

    db_path = parley.settings.db_path
    with write_lock_held(db_path):
        # Another program holds the database: the holder's final write is blocked until the
        # block ends (each attempt waits up to db_busy_timeout).
        holder.hang_up()
        # The model goes to the waiting turn as soon as the work stopped, not after the write:
        # the upstream sees its request while the holder's write is still blocked. Were the
        # lease released after the write, nothing would reach the upstream before the lock
        # is gone, and this wait (shorter than one write attempt) would fail.
        upstream.wait_for(lambda: len(upstream.records) == 2, timeout=SHORTER_THAN_A_WRITE)
        assert stored_status(db_path, holder_id)[0] == "streaming"

    message = parley.wait_settled(holder_conversation, holder_id)
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
        status, content = stored_status(parley.settings.db_path, message_id)
        assert status == "streaming"
        return content

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
