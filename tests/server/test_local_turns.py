"""Server-core invariants with the bundled local model behind the turn: shutdown and crash."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from server.models.bundled import BUNDLED_MODEL_NAME
from server.models.local import LocalBackend
from tests.server.test_shutdown_and_crash import stored_message
from tests.support.client import SSEStream, outcome, request
from tests.support.parley import Parley, wait_model_ready
from tests.support.process import ServerProcess, child_pids
from tests.support.waiting import wait_for

STORY = "Write a very long story about a dragon and a knight, at least 1000 words."


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_graceful_stop_mid_reply_stops_the_worker_and_saves_as_shutdown(data_dir: Path) -> None:
    server = Parley(data_dir).start()
    wait_model_ready(server)
    backend = server.services.models.resolve(None).backend
    assert isinstance(backend, LocalBackend)
    conversation_id = server.new_conversation()
    stream = server.send(conversation_id, STORY)
    delivered = stream.read_until(lambda text: len(text) > 40)

    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stream.read_all()
    stopper.join(30)
    assert not stopper.is_alive()
    assert outcome(stream.final) == ("interrupted", "shutdown")
    assert backend.generations[-1].returned_at is not None

    reopened = Parley(data_dir).start()
    try:
        message = reopened.message(conversation_id, stream.first["message_id"])
        assert message["content"].startswith(delivered)
        assert (message["status"], message["ended_by"]) == ("interrupted", "shutdown")
    finally:
        reopened.stop()


@pytest.mark.slow
def test_kill_9_mid_local_reply_then_restart(
    data_dir: Path, processes: list[ServerProcess]
) -> None:
    process = ServerProcess(data_dir, None).start()
    processes.append(process)
    conversation_id = process.new_conversation()
    stream = process.send(conversation_id, STORY, timeout=60)
    stream.read_until(lambda text: len(text) > 80)
    message_id = stream.first["message_id"]
    db_path = data_dir / "parley.sqlite3"
    checkpointed = ""

    def has_checkpoint() -> bool:
        nonlocal checkpointed
        checkpointed = str(stored_message(db_path, message_id)["content"])
        return len(checkpointed) > 40

    wait_for(has_checkpoint, timeout=30)
    assert process.proc is not None
    engines = child_pids(process.proc.pid)
    assert len(engines) == 1  # the llama.cpp engine's own process
    process.kill()
    stream.close()
    # The engine sees its stdin close when Parley dies, and exits: no orphan keeps the model.
    wait_for(lambda: not Path(f"/proc/{engines[0]}").exists() or zombie(engines[0]), timeout=10)

    restarted = ServerProcess(data_dir, None).start()
    processes.append(restarted)
    reply = request(
        restarted.port, "GET", f"/api/conversations/{conversation_id}", token=restarted.token
    )
    message = next(m for m in reply.json()["messages"] if m["id"] == message_id)
    assert message["content"].startswith(checkpointed)
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    assert stored_message(db_path, message_id)["status"] == "interrupted"  # integrity_check too
    restarted.terminate()


def test_a_prompt_longer_than_the_context_is_a_400_naming_the_limit(local_parley: Parley) -> None:
    too_long = "hello " * 30_000  # ~30,000 tokens; the bundled model's context holds 2,048
    conversation_id = local_parley.new_conversation()
    path = f"/api/conversations/{conversation_id}/messages"
    reply = local_parley.call("POST", path, json_body={"content": too_long})
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["code"] == "context_length_exceeded"
    assert "at most" in error["message"] and "tokens" in error["message"]
    assert local_parley.conversation(conversation_id)["messages"] == []  # nothing written

    body = {"model": BUNDLED_MODEL_NAME, "messages": [{"role": "user", "content": too_long}]}
    reply = local_parley.call("POST", "/v1/chat/completions", json_body=body)
    assert reply.status == 400 and reply.json()["error"]["code"] == "context_length_exceeded"
    # A message that fits is still answered.
    stream = local_parley.send(conversation_id, "Say hi.", max_tokens=4)
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"


def test_a_system_prompt_that_leaves_no_room_is_a_400_too(local_parley: Parley) -> None:
    conversation_id = local_parley.new_conversation(system="lantern river stone " * 1500)
    reply = local_parley.call(
        "POST", f"/api/conversations/{conversation_id}/messages", json_body={"content": "Hi."}
    )
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "context_length_exceeded"
    assert local_parley.conversation(conversation_id)["messages"] == []  # nothing written


def test_the_bundled_model_is_offered_no_tools_and_refuses_them_on_v1(
    data_dir: Path, tmp_path: Path
) -> None:
    from tests.support.tools import tool_server, write_config

    write_config(data_dir / "mcp.json", {"t": tool_server(tmp_path / "log")})
    parley = Parley(data_dir).start()
    try:
        wait_model_ready(parley)
        parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
        tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        body = {"messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
        reply = parley.call("POST", "/v1/chat/completions", json_body=body)
        assert reply.status == 400, reply.body
        error = reply.json()["error"]
        assert error["code"] == "tools_not_supported"
        assert "chat template has no tool calling" in error["message"]

        # A conversation on it still answers, with no tools offered and no steps.
        stream = parley.send(parley.new_conversation(), "Say hi.", max_tokens=4)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        assert stream.steps == [] and stream.tool_calls == []
        backend = parley.services.models.resolve(None).backend
        assert backend.tools_unsupported is not None
    finally:
        parley.stop()


def test_use_my_documents_with_the_bundled_model(data_dir: Path, tmp_path: Path) -> None:
    from tests.support.documents import topic_folder

    topic_folder(tmp_path / "docs")
    parley = Parley(data_dir).start()
    try:
        wait_model_ready(parley)
        reply = parley.call("POST", "/api/library/folders", json_body={"path": str(tmp_path)})
        assert reply.status == 201, reply.body

        def indexed() -> bool:
            state = parley.call("GET", "/api/library").json()
            return bool(state["progress"]["state"] == "idle" and state["folders"][0]["files"])

        wait_for(indexed, timeout=30)
        plain = parley.new_conversation()
        with_documents = parley.new_conversation(documents=True)
        sizes = []
        for conversation_id in (plain, with_documents):
            stream = parley.send(conversation_id, "Where do aardvarks dig burrows?", max_tokens=8)
            stream.read_all()
            assert stream.final["parley"]["status"] == "completed"
            sizes.append(stream.final["usage"]["prompt_tokens"])
        # The passages went into the bundled model's prompt (it has no tool calling).
        assert sizes[1] > sizes[0] + 100
    finally:
        parley.stop()


def test_a_stopped_local_reply_is_truly_continued_mid_sentence(data_dir: Path) -> None:
    """The bundled model is given its partial reply as the start of its turn (llama-server
    goes on from a final assistant message): it picks up where it stopped."""
    server = Parley(data_dir).start()
    try:
        wait_model_ready(server)
        conversation_id = server.new_conversation()
        stream = server.send(conversation_id, STORY)
        stream.read_until(lambda text: len(text) > 120)
        stream.hang_up()
        message_id = stream.first["message_id"]
        stopped = server.wait_settled(conversation_id, message_id)
        partial = stopped["content"]
        path = f"/api/conversations/{conversation_id}/messages/{message_id}/continue"
        going_on = SSEStream(server.port, path, {"max_tokens": 24}, server.token, timeout=60)
        going_on.read_all()
        added = going_on.delivered
        message = server.message(conversation_id, message_id)
        assert message["content"] == partial + added and added.strip()
        assert (message["status"], message["continued"]) == ("completed", "prefix")
        # Not a new reply: it does not start over with the partial's own opening words.
        assert not added.lstrip().startswith(partial.split()[0] + " " + partial.split()[1])
        # The partial was in the prompt: ~25 tokens more than the question alone.
        asked = stopped["usage"]["prompt_tokens"]
        assert going_on.final["usage"]["prompt_tokens"] >= asked + 15
    finally:
        server.stop()
