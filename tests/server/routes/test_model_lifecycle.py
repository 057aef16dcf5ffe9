"""Load and eject a local model through the API, on real engines: the status says where each
engine is (and its process's memory); an eject while a reply streams is refused unless the
user asks to stop it, and then the reply ends as a Stop would."""

from __future__ import annotations

from pathlib import Path

from tests.support.local_models import (
    STORY,
    engine_pid,
    gone,
    lifecycles,
    local_parley,
    wait_loaded,
)
from tests.support.parley import Parley


def model(server: Parley, name: str) -> dict:  # type: ignore[type-arg]
    return next(m for m in server.status()["models"] if m["name"] == name)


def test_load_and_unload_a_local_model(data_dir: Path) -> None:
    server = local_parley(data_dir, ["a", "b"])
    try:
        wait_loaded(server, "a")
        found = model(server, "b")
        assert (found["lifecycle"], found["memory_bytes"]) == ("not_loaded", None)
        assert found["state"] == "unloaded" and found["keep_alive"] == 600  # old fields kept
        loaded = server.call("POST", "/api/models/local/b/load")
        assert loaded.status == 200, loaded.body
        assert loaded.json()["lifecycle"] == "loaded"
        assert model(server, "b")["memory_bytes"] > 10_000_000  # its engine's RSS
        pid = engine_pid(server, "b")
        ejected = server.call("POST", "/api/models/local/b/unload")
        assert ejected.status == 200, ejected.body
        assert ejected.json()["lifecycle"] == "not_loaded" and gone(pid)
        assert lifecycles(server) == {"a": "loaded", "b": "not_loaded"}
        missing = server.call("POST", "/api/models/local/nothing/load")
        assert missing.status == 404
    finally:
        server.stop()


def test_eject_mid_reply_is_refused_unless_asked_to_stop_it(data_dir: Path) -> None:
    server = local_parley(data_dir, ["a"])
    try:
        wait_loaded(server, "a")
        cid = server.new_conversation(model="a")
        stream = server.send(cid, STORY)
        stream.read_until(lambda text: len(text) > 20)
        message_id = stream.first["message_id"]
        pid = engine_pid(server, "a")
        assert model(server, "a")["lifecycle"] == "busy"
        refused = server.call("POST", "/api/models/local/a/unload")
        assert refused.status == 409 and refused.json()["error"]["code"] == "model_in_use"
        before = len(stream.delivered)
        stream.read_until(lambda text: len(text) > before + 20)  # untouched
        ejected = server.call("POST", "/api/models/local/a/unload?stop_replies=true")
        assert ejected.status == 200, ejected.body
        assert gone(pid)
        message = server.wait_settled(cid, message_id)
        assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
        assert message["content"].startswith(stream.delivered[:before])
        stream.close()
    finally:
        server.stop()
