"""Every ending of a turn, over real sockets, against the scripted upstream."""

from __future__ import annotations

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def test_completed_reply_is_streamed_and_saved(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=12)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id, "Say something")
    events = stream.read_all()

    assert stream.status == 200
    assert events[-1] == "[DONE]"
    first = stream.first
    assert first["object"] == "chat.completion.chunk"
    assert first["conversation_id"] == conversation_id
    assert first["choices"][0]["delta"]["role"] == "assistant"
    assert stream.delivered == upstream.script.text()
    final = stream.final
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["parley"] == {"status": "completed", "ended_by": None}

    message = parley.message(conversation_id, first["message_id"])
    assert message["content"] == upstream.script.text()
    assert message["status"] == "completed"
    assert message["ended_by"] is None
    assert message["completed_at"] is not None
    assert message["usage"]["completion_tokens"] == 12
    user = parley.message(conversation_id, first["user_message_id"])
    assert (user["role"], user["content"]) == ("user", "Say something")
    assert parley.wait_idle()["active_turns"] == 0


def test_hang_up_mid_reply_keeps_delivered_text(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=2000, rate=200)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    delivered = stream.read_until(lambda text: text.count(" ") >= 5)
    stream.hang_up()

    upstream.wait_hung_up()
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"].startswith(delivered)
    assert message["status"] == "interrupted"
    assert message["ended_by"] == "client_hangup"
    assert message["completed_at"] is not None
    assert not upstream.records[0].finished
    status = parley.wait_idle()
    assert status["models"][0]["in_use"] is False

    # The next turn gets the model at once and completes.
    upstream.script = Script(tokens=3)
    again = parley.send(conversation_id, "again")
    again.read_all()
    assert again.final["parley"]["status"] == "completed"
    assert again.delivered == "t0 t1 t2 "


def test_hang_up_while_upstream_is_stalled(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=50, stall_after=3)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    delivered = stream.read_until(lambda text: text == "t0 t1 t2 ")
    stream.hang_up()

    upstream.wait_hung_up()
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == delivered
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    parley.wait_idle()


def test_hang_up_before_first_token(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=5, first_delay=30)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    message_id = stream.first["message_id"]
    upstream.wait_for(lambda: upstream.records)
    stream.hang_up()

    upstream.wait_hung_up()
    message = parley.wait_settled(conversation_id, message_id)
    assert message["content"] == ""
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert upstream.records[0].sent == []
    parley.wait_idle()


def test_hang_up_while_queued_never_takes_the_model(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=50, stall_after=2)
    first_conversation = parley.new_conversation()
    holder = parley.send(first_conversation)
    holder.read_until(lambda text: text == "t0 t1 ")

    second_conversation = parley.new_conversation()
    queued = parley.send(second_conversation)
    queued_id = queued.first["message_id"]
    upstream.wait_for(lambda: parley.status()["models"][0]["queue_length"] == 1)
    queued.hang_up()

    message = parley.wait_settled(second_conversation, queued_id)
    assert (message["status"], message["ended_by"], message["content"]) == (
        "interrupted",
        "client_hangup",
        "",
    )
    status = parley.status()
    assert status["models"][0]["queue_length"] == 0
    assert status["models"][0]["in_use"] is True  # still the first turn's
    assert len(upstream.records) == 1  # the queued turn never reached the model

    holder.hang_up()
    upstream.wait_hung_up()
    parley.wait_idle()
    upstream.script = Script(tokens=2)
    after = parley.send(second_conversation, "now")
    after.read_all()
    assert after.final["parley"]["status"] == "completed"


def test_upstream_dropping_mid_stream_is_an_error_that_keeps_the_partial_reply(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=10, fail_after=4, fail_mode="drop")
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()

    final = stream.final
    assert final["parley"]["status"] == "error"
    assert final["parley"]["ended_by"] == "error"
    assert "broke" in final["parley"]["error"]
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == "t0 t1 t2 t3 "
    assert (message["status"], message["ended_by"]) == ("error", "error")
    assert message["error"]
    parley.wait_idle()


def test_upstream_error_event_mid_stream_is_an_error(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=10, fail_after=2, fail_mode="error_event")
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == "t0 t1 "
    assert message["status"] == "error"
    assert "scripted failure" in message["error"]
    upstream.wait_hung_up()  # Parley closed the upstream stream it gave up on
    parley.wait_idle()


def test_upstream_refusal_is_an_error_with_its_message(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(status=500)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["status"] == "error"
    assert "HTTP 500" in message["error"] and "scripted refusal" in message["error"]
    parley.wait_idle()


def test_unreachable_upstream_is_an_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from server.serve import bind

    sock = bind("127.0.0.1", 0)
    dead_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    sock.close()
    server = Parley(tmp_path / "data", dead_url).start()
    try:
        conversation_id = server.new_conversation()
        stream = server.send(conversation_id)
        stream.read_all()
        message = server.wait_settled(conversation_id, stream.first["message_id"])
        assert message["status"] == "error"
        assert "cannot reach" in message["error"]
        server.wait_idle()
    finally:
        server.stop()
