"""`GET /api/conversations/{id}/messages/{message_id}[?wait=settled]`: one message, and a
long-poll that answers once the reply is saved (the desktop's replacement for polling)."""

from __future__ import annotations

import threading
from pathlib import Path

from server.settings import Limits
from tests.support.client import Reply
from tests.support.database import stored_status
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def test_unknown_conversation_or_message_is_404_and_a_bad_wait_is_400(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2)
    conversation_id = parley.new_conversation()
    other = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    message_id = stream.first["message_id"]

    base = "/api/conversations"
    assert parley.call("GET", f"{base}/{conversation_id}/messages/{message_id}").status == 200
    for path in (
        f"{base}/nope/messages/{message_id}",
        f"{base}/{conversation_id}/messages/nope",
        f"{base}/{other}/messages/{message_id}",  # a message of another conversation
        f"{base}/nope/messages/nope?wait=settled",
    ):
        reply = parley.call("GET", path)
        assert reply.status == 404, path
        assert reply.json()["error"]["code"] == "not_found"
    reply = parley.call("GET", f"{base}/{conversation_id}/messages/{message_id}?wait=soon")
    assert reply.status == 400 and reply.json()["error"]["code"] == "invalid_field"


def test_long_poll_after_a_hang_up_returns_the_saved_reply(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    delivered = stream.read_until(lambda text: text == "t0 t1 t2 ")
    message_id = stream.first["message_id"]
    replies: list[Reply] = []

    def long_poll() -> None:
        replies.append(parley.settled(conversation_id, message_id))

    # Asked while the reply streams (the upstream is silent now): the answer waits.
    poll = threading.Thread(target=long_poll)
    poll.start()
    poll.join(0.5)
    assert poll.is_alive(), "the long-poll answered while the reply was still streaming"
    assert stored_status(parley.settings.db_path, message_id)[0] == "streaming"
    stream.hang_up()
    poll.join(20)

    assert replies and replies[0].status == 200
    message = replies[0].json()
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert message["content"].startswith(delivered)
    assert message == parley.message(conversation_id, message_id)  # as stored


def test_long_poll_returns_a_completed_reply_with_the_final_chunks_usage(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=20, rate=50)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    message_id = stream.first["message_id"]

    reply = parley.settled(conversation_id, message_id)  # while it streams

    assert reply.status == 200
    message = reply.json()
    assert message["status"] == "completed"
    stream.read_all()
    assert message["content"] == stream.delivered == upstream.script.text()
    # The final chunk alone tells what was saved: usage exactly as stored, timings included.
    assert stream.final["usage"] == message["usage"]
    assert {"ttft_ms", "tokens_per_s", "completion_tokens"} <= set(message["usage"])
    assert stream.final["parley"] == {"status": "completed", "ended_by": None}


def test_long_poll_is_bounded_by_settled_wait(data_dir: Path, upstream: ScriptedUpstream) -> None:
    limits = Limits(stop_timeout=0.2, db_busy_timeout=0.2, final_write_pause=0.0, settled_wait=1.0)
    server = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        upstream.script = Script(tokens=100, stall_after=2)
        conversation_id = server.new_conversation()
        stream = server.send(conversation_id)
        delivered = stream.read_until(lambda text: text == "t0 t1 ")
        message_id = stream.first["message_id"]

        # Nobody hangs up and the upstream stays silent: the reply is returned as it is.
        reply = server.settled(conversation_id, message_id)
        assert reply.status == 200
        message = reply.json()
        assert message["status"] == "streaming"
        assert delivered.startswith(message["content"])  # the last checkpoint

        stream.hang_up()
        assert server.settled(conversation_id, message_id).json()["status"] == "interrupted"
    finally:
        server.stop()
