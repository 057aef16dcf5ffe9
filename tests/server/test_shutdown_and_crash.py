"""Server shutdown and process death in the middle of a reply."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tests.support.client import SSEStream, outcome, request
from tests.support.database import write_lock_held
from tests.support.parley import Parley
from tests.support.process import ServerProcess
from tests.support.upstream import Script, ScriptedUpstream


def start_process(
    processes: list[ServerProcess], data_dir: Path, upstream: ScriptedUpstream
) -> ServerProcess:
    process = ServerProcess(data_dir, upstream.base_url).start()
    processes.append(process)
    return process


def stored_message(db_path: Path, message_id: str) -> dict[str, object]:
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        row = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        return dict(row)
    finally:
        conn.close()


def test_graceful_stop_mid_reply_saves_it_as_shutdown(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    server = Parley(data_dir, upstream.base_url).start()
    conversation_id = server.new_conversation()
    stream = server.send(conversation_id)
    delivered = stream.read_until(lambda text: text == "t0 t1 t2 ")

    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stream.read_all()  # the stream ends properly: a final chunk, then [DONE]
    stopper.join(20)
    assert not stopper.is_alive()
    assert outcome(stream.final) == ("interrupted", "shutdown")
    assert stream.events[-1] == "[DONE]"
    ended = stream.final["parley"]["ended"]  # what the stop ended: the reply's model call
    assert (ended["model_calls"], ended["tool_calls"], ended["sub_agents"]) == (1, 0, 0)
    upstream.wait_hung_up()

    reopened = Parley(data_dir, upstream.base_url).start()
    try:
        message = reopened.message(conversation_id, stream.first["message_id"])
        assert message["content"] == delivered
        assert (message["status"], message["ended_by"]) == ("interrupted", "shutdown")
        assert message["completed_at"] is not None
    finally:
        reopened.stop()


def test_shutdown_while_a_turn_opens_settles_what_it_wrote(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    server = Parley(data_dir, upstream.base_url).start()
    conversation_id = server.new_conversation()
    streams: list[SSEStream] = []
    sender = threading.Thread(target=lambda: streams.append(server.send(conversation_id, "hi")))
    stopper = threading.Thread(target=server.stop)
    with write_lock_held(server.settings.db_path):
        # The turn's rows wait for the lock: its run is registered, still opening.
        sender.start()
        server.wait_for(lambda: server.status()["active_turns"] == 1)
        run = server.services.runs.runs()[0]
        stopper.start()
        server.wait_for(lambda: run.stop_reason == "shutdown")
    # The open goes through once the lock is gone; the same run then settles what it wrote.
    sender.join(20)
    stopper.join(20)
    assert not stopper.is_alive()
    # The client was told: its turn was written, then what it was saved as.
    assert streams and streams[0].status == 200
    streams[0].read_all()
    assert outcome(streams[0].final) == ("interrupted", "shutdown")

    conn = sqlite3.connect(data_dir / "parley.sqlite3")
    try:
        rows = conn.execute("SELECT role, content, status, ended_by FROM messages").fetchall()
    finally:
        conn.close()
    assert rows == [
        ("user", "hi", "completed", None),
        ("assistant", "", "interrupted", "shutdown"),
    ]
    assert not upstream.records  # it never reached the model


@pytest.mark.slow
def test_sigterm_mid_reply_saves_it_as_shutdown(
    data_dir: Path, upstream: ScriptedUpstream, processes: list[ServerProcess]
) -> None:
    upstream.script = Script(tokens=100, stall_after=2)
    process = start_process(processes, data_dir, upstream)
    conversation_id = process.new_conversation()
    stream = process.send(conversation_id, "hi")
    delivered = stream.read_until(lambda text: text == "t0 t1 ")

    process.terminate()
    stream.read_all()
    assert stream.final["parley"]["ended_by"] == "shutdown"
    message = stored_message(data_dir / "parley.sqlite3", stream.first["message_id"])
    assert message["content"] == delivered
    assert (message["status"], message["ended_by"]) == ("interrupted", "shutdown")
    assert "API token" not in "".join(process.output)  # a supplied token is never printed
    assert process.token not in "".join(process.output)


@pytest.mark.slow
def test_kill_9_mid_reply_then_restart_marks_it_crash_and_keeps_the_text(
    data_dir: Path, upstream: ScriptedUpstream, processes: list[ServerProcess]
) -> None:
    upstream.script = Script(tokens=100, stall_after=5)
    process = start_process(processes, data_dir, upstream)
    conversation_id = process.new_conversation()
    stream = process.send(conversation_id, "hi")
    delivered = stream.read_until(lambda text: text == "t0 t1 t2 t3 t4 ")
    message_id = stream.first["message_id"]
    db_path = data_dir / "parley.sqlite3"
    upstream.wait_for(lambda: stored_message(db_path, message_id)["content"] == delivered)

    process.kill()
    stream.close()
    restarted = start_process(processes, data_dir, upstream)
    reply = request(
        restarted.port, "GET", f"/api/conversations/{conversation_id}", token=restarted.token
    )
    messages = {m["id"]: m for m in reply.json()["messages"]}
    assert messages[stream.first["user_message_id"]]["content"] == "hi"
    message = messages[message_id]
    assert message["content"] == delivered
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    assert message["completed_at"] is not None
    assert stored_message(db_path, message_id)["status"] == "interrupted"  # integrity ok too
    restarted.terminate()


def test_kill_9_during_a_continuation_keeps_both_texts_and_no_stale_figures(
    data_dir: Path, upstream: ScriptedUpstream, processes: list[ServerProcess]
) -> None:
    process = start_process(processes, data_dir, upstream)
    conversation_id = process.new_conversation()
    upstream.script = Script(texts=["Once", " upon"], finish_reason="length")
    first = process.send(conversation_id, "a story")
    first.read_all()
    message_id = first.first["message_id"]
    assert first.final["usage"]["completion_tokens"] == 2  # the first generation's figures

    upstream.script = Script(tokens=100, stall_after=5)
    path = f"/api/conversations/{conversation_id}/messages/{message_id}/continue"
    going_on = SSEStream(process.port, path, {}, process.token)
    added = going_on.read_until(lambda text: text.endswith("t4 "))
    db_path = data_dir / "parley.sqlite3"
    upstream.wait_for(lambda: stored_message(db_path, message_id)["content"] == "Once upon" + added)
    process.kill()
    going_on.close()

    restarted = start_process(processes, data_dir, upstream)
    reply = request(
        restarted.port, "GET", f"/api/conversations/{conversation_id}", token=restarted.token
    )
    message = {m["id"]: m for m in reply.json()["messages"]}[message_id]
    assert message["content"] == "Once upon" + added
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    # The first generation's figures do not stand for the text as it is now.
    assert message["usage"] is None and message["finish_reason"] is None
    restarted.terminate()
