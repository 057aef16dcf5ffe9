"""The models API: list every model with its facts; add a GGUF file, refuse what is not one;
remove an added one; added models are remembered and chat like the bundled one."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import httpx
import pytest

from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from server.models.local import LocalBackend
from tests.support.parley import Parley, wait_model_ready
from tests.support.process import child_pids, command_line
from tests.support.upstream import Script, ScriptedUpstream


def models(server: Parley) -> dict[str, dict]:  # type: ignore[type-arg]
    reply = server.call("GET", "/api/models")
    assert reply.status == 200, reply.body
    return {m["name"]: m for m in reply.json()["models"]}


def test_the_bundled_model_is_listed_with_its_files_facts(local_parley: Parley) -> None:
    found = models(local_parley)[BUNDLED_MODEL_NAME]
    assert found["kind"] == "local" and found["state"] == "ready"
    assert (found["default"], found["removable"]) == (True, False)
    assert (found["slots"], found["slots_busy"], found["queue_length"]) == (2, 0, 0)
    gguf = found["gguf"]
    assert gguf["quantization"] == "Q4_1" and gguf["context_length"] == 8192
    assert gguf["size_bytes"] == bundled_gguf().stat().st_size
    assert gguf["architecture"] == "llama"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: d / "missing.gguf", "no file at"),
        (lambda d: d, "is a folder"),
        (lambda d: _write(d / "notes.gguf", b"hello, I am text\n" * 100), "not a GGUF model file"),
        (lambda d: _write(d / "cut.gguf", bundled_gguf().read_bytes()[:200]), "truncated"),
        (lambda d: _write(d / "half.gguf", bundled_gguf().read_bytes()[:40_000_000]), "truncated"),
        (lambda d: _write(d / "huge.gguf", HUGE_ARRAY), "damaged"),
        (lambda d: _fifo(d / "pipe.gguf"), "not a regular file"),
    ],
)
def test_what_is_not_a_usable_gguf_is_refused_and_nothing_is_added(
    data_dir: Path, tmp_path: Path, make: object, reason: str
) -> None:
    server = Parley(data_dir).start()
    try:
        before = set(models(server))
        path = make(tmp_path)  # type: ignore[operator]
        reply = server.call("POST", "/api/models/local", json_body={"path": str(path)})
        assert reply.status == 400, reply.body
        assert reason in reply.json()["error"]["message"]
        assert set(models(server)) == before
        assert not (data_dir / "models.json").exists()
    finally:
        server.stop()


# A header with one key whose value claims 2^63 numbers: read past, it would seek to nowhere.
HUGE_ARRAY = (
    b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 4) + b"evil"
    + struct.pack("<IIQ", 9, 4, 2**63)
)  # fmt: skip


def _fifo(path: Path) -> Path:
    os.mkfifo(path)  # opening it would block for ever
    return path


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_an_added_gguf_chats_is_remembered_and_can_be_removed(
    data_dir: Path, tmp_path: Path
) -> None:
    # A copy: a link to the bundled file is that model already (refused, see below).
    link = tmp_path / "my-model.gguf"
    shutil.copyfile(bundled_gguf(), link)
    server = Parley(data_dir).start()
    try:
        reply = server.call("POST", "/api/models/local", json_body={"path": str(link)})
        assert reply.status == 201, reply.body
        added = reply.json()
        assert (added["name"], added["kind"], added["removable"]) == ("my-model", "local", True)
        assert added["state"] == "unloaded"  # loads on first use
        again = server.call("POST", "/api/models/local", json_body={"path": str(link)})
        assert again.status == 409
        relative = server.call("POST", "/api/models/local", json_body={"path": "x.gguf"})
        assert relative.status == 400
    finally:
        server.stop()

    server = Parley(data_dir).start()  # remembered across a restart
    try:
        assert "my-model" in models(server)
        conversation_id = server.new_conversation(model="my-model")
        stream = server.send(conversation_id, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        assert models(server)["my-model"]["state"] == "ready"

        bundled = server.call("DELETE", f"/api/models/local/{BUNDLED_MODEL_NAME}")
        assert bundled.status == 409
        assert server.call("DELETE", "/api/models/local/nothing").status == 404
        assert server.call("DELETE", "/api/models/local/my-model").status == 204
        assert "my-model" not in models(server)
        wait_model_ready(server)  # the bundled model is untouched
    finally:
        server.stop()
    server = Parley(data_dir).start()
    try:
        assert "my-model" not in models(server)
    finally:
        server.stop()


def test_removing_a_model_a_sub_agent_uses_stops_the_reply_when_asked(
    data_dir: Path, tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    # Issue 41: the reply's model is the scripted upstream; its sub-agent was handed the
    # added local model. Removing that model is refused while the tree uses it, unless the
    # user asks to stop its replies: then the reply ends as a Stop would, the child with it.
    copy = tmp_path / "helper-model.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    server = Parley(data_dir, upstream.base_url).start()
    try:
        reply = server.call("POST", "/api/models/local", json_body={"path": str(copy)})
        assert reply.status == 201, reply.body
        task = "Write a long story about a lighthouse keeper, in many chapters."
        upstream.queue = [Script(tokens=0, tool_calls=[{"name": "delegate", "arguments":
            json.dumps({"task": task, "model": "helper-model"})}])]  # fmt: skip
        upstream.script = Script(texts=["never said"])
        cid = server.new_conversation()
        stream = server.send(cid, "Ask a helper for a story.")
        message_id = stream.first["message_id"]

        def child_started() -> bool:
            parts = server.message(cid, message_id)["parts"] or []
            return any(p["type"] == "tool" and "agent" in p for p in parts)

        server.wait_for(child_started, timeout=30)
        refused = server.call("DELETE", "/api/models/local/helper-model")
        assert refused.status == 409 and refused.json()["error"]["code"] == "model_in_use"
        removed = server.call("DELETE", "/api/models/local/helper-model?stop_replies=true")
        assert removed.status == 204, removed.body
        message = server.wait_settled(cid, message_id)
        assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
        (step,) = [p for p in message["parts"] if p["type"] == "tool"]
        assert step["status"] == "interrupted" and step["agent"]["model"] == "helper-model"
        assert message["ended"]["sub_agents"] == 1
        assert "helper-model" not in models(server)
        assert not any("never said" in str(r.body) for r in upstream.records)  # not resumed
    finally:
        server.stop()


def test_a_local_models_settings_are_changed_remembered_and_used(data_dir: Path) -> None:
    words = "lantern river stone " * 400  # ~1,200 tokens: fits 4,096, not 1,024
    server = Parley(data_dir).start()
    try:
        wait_model_ready(server)
        path = f"/api/models/{BUNDLED_MODEL_NAME}"
        assert server.call("PATCH", path, json_body={"n_ctx": 100}).status == 400
        assert server.call("PATCH", path, json_body={}).status == 400
        assert server.call("PATCH", "/api/models/nothing", json_body={"n_ctx": 1024}).status == 404
        reply = server.call("PATCH", path, json_body={"n_ctx": 1024, "n_threads": 1})
        assert reply.status == 200, reply.body
        changed = reply.json()
        assert changed["settings"] == {
            "n_ctx": 1024,
            "n_threads": 1,
            "n_gpu_layers": 0,
            "keep_alive": 600,
        }
        assert changed["state"] == "unloaded"  # starts again with them on next use
    finally:
        server.stop()

    server = Parley(data_dir).start()  # remembered
    try:
        found = models(server)[BUNDLED_MODEL_NAME]
        assert found["settings"]["n_ctx"] == 1024
        conversation_id = server.new_conversation()
        refused = server.call(
            "POST", f"/api/conversations/{conversation_id}/messages", json_body={"content": words}
        )
        assert refused.status == 400 and "context_length_exceeded" in refused.body.decode()
        stream = server.send(conversation_id, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    finally:
        server.stop()


def test_an_upstream_has_no_local_settings(parley: Parley) -> None:
    reply = parley.call("PATCH", "/api/models/scripted", json_body={"n_ctx": 2048})
    assert reply.status == 400 and reply.json()["error"]["code"] == "not_local"


def engine_processes() -> list[int]:
    """This process's children that are engines (Linux /proc)."""
    return [
        child
        for child in child_pids(os.getpid())
        if b"server.models.engine_process" in command_line(child)
    ]


def test_settings_changed_while_the_model_loads_leave_one_engine_with_them(
    data_dir: Path,
) -> None:
    server = Parley(data_dir).start()  # the bundled model starts loading at once
    try:
        reply = server.call("PATCH", f"/api/models/{BUNDLED_MODEL_NAME}", json_body={"n_ctx": 2048})
        assert reply.status == 200, reply.body
        conversation_id = server.new_conversation()
        stream = server.send(conversation_id, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        # The load that began with the old settings stopped what it started.
        server.wait_for(lambda: len(engine_processes()) == 1, timeout=15)
        assert models(server)[BUNDLED_MODEL_NAME]["settings"]["n_ctx"] == 2048
        backend = server.services.models.resolve(None).backend
        assert isinstance(backend, LocalBackend) and backend.engine is not None
        headers = {"Authorization": f"Bearer {backend.engine.key}", "Connection": "close"}
        slots = httpx.get(f"{backend.engine.url}/slots", headers=headers, timeout=30).json()
        assert [slot["n_ctx"] for slot in slots] == [2048, 2048]  # the engine runs with them
    finally:
        server.stop()
    assert not engine_processes() or server.wait_for(lambda: not engine_processes(), timeout=10)


def test_a_file_that_is_a_model_already_is_refused_with_its_name(
    data_dir: Path, tmp_path: Path
) -> None:
    link, hard = tmp_path / "again.gguf", tmp_path / "hard.gguf"
    os.symlink(bundled_gguf(), link)
    if _same_device(bundled_gguf(), tmp_path):  # a hard link: another name, the same inode
        os.link(bundled_gguf(), hard)
    server = Parley(data_dir).start()
    try:
        for path in (link, hard) if hard.exists() else (link,):
            reply = server.call("POST", "/api/models/local", json_body={"path": str(path)})
            assert reply.status == 409, reply.body
            error = reply.json()["error"]
            assert error["code"] == "model_exists"
            assert BUNDLED_MODEL_NAME in error["message"]
        assert set(models(server)) == {BUNDLED_MODEL_NAME}
    finally:
        server.stop()


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


def test_set_as_default_is_used_for_new_chats_and_remembered(
    data_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "second.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    server = Parley(data_dir).start()
    try:
        assert server.call("POST", "/api/models/local", json_body={"path": str(copy)}).status == 201
        assert server.call("GET", "/api/models").json()["default"] == BUNDLED_MODEL_NAME
        reply = server.call("PUT", "/api/models/default", json_body={"name": "second"})
        assert reply.status == 200 and reply.json() == {"default": "second"}
        listed = server.call("GET", "/api/models").json()
        assert listed["default"] == "second" and models(server)["second"]["default"]
        unknown = server.call("PUT", "/api/models/default", json_body={"name": "nothing"})
        assert unknown.status == 404
        assert server.call("PUT", "/api/models/default", json_body={}).status == 400
    finally:
        server.stop()
    server = Parley(data_dir).start()  # remembered across a restart
    try:
        assert server.call("GET", "/api/models").json()["default"] == "second"
        assert server.status()["default_model"] == "second"
        # Removed, it is no longer the default: the first model is again.
        assert server.call("DELETE", "/api/models/local/second").status == 204
        assert server.call("GET", "/api/models").json()["default"] == BUNDLED_MODEL_NAME
    finally:
        server.stop()
