"""Which local engines stay loaded, on real engines (the bundled GGUF under several names):
unloaded when idle for their keep-alive, and within a memory budget — the least recently
used idle one unloaded first, one a reply uses never, a load that cannot fit refused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.local_models import (
    STORY,
    backend_of,
    engine_pid,
    gone,
    lifecycles,
    loaded,
    local_parley,
    one_estimate,
    wait_loaded,
)
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true


def test_an_idle_model_is_unloaded_after_its_keep_alive(data_dir: Path) -> None:
    server = local_parley(data_dir, ["a"], keep_alive=1)
    try:
        wait_loaded(server, "a")
        cid = server.new_conversation(model="a")
        stream = server.send(cid, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        pid = engine_pid(server, "a")
        server.wait_for(lambda: gone(pid), timeout=30)  # the process itself, not a flag
        assert lifecycles(server)["a"] == "not_loaded"
        assert backend_of(server, "a").engine is None
        again = server.send(cid, "Say hi again.", max_tokens=5)  # loads on next use
        again.read_all()
        assert again.final["parley"]["status"] == "completed"
    finally:
        server.stop()


def test_keep_alive_zero_unloads_after_the_reply_never_during_it(data_dir: Path) -> None:
    server = local_parley(data_dir, ["a"], keep_alive=0)
    try:
        # It warms up at start ("loading" before the first request), and is unloaded as soon
        # as it has loaded, with no reply.
        server.wait_for(lambda: lifecycles(server)["a"] == "not_loaded", timeout=60)
        cid = server.new_conversation(model="a")
        stream = server.send(cid, STORY)
        stream.read_until(lambda text: len(text) > 20)
        pid = engine_pid(server, "a")
        assert lifecycles(server)["a"] == "busy"
        stream.read_until(lambda text: len(text) > 120)  # still the same engine, mid-reply
        assert engine_pid(server, "a") == pid and not gone(pid)
        stream.hang_up()
        server.wait_for(lambda: gone(pid), timeout=30)
        assert lifecycles(server)["a"] == "not_loaded"
    finally:
        server.stop()


def test_a_load_over_the_budget_unloads_the_least_recently_used(data_dir: Path) -> None:
    budget = int(one_estimate() * 2.5)  # room for two engines
    server = local_parley(data_dir, ["a", "b", "c"], budget=budget)
    try:
        wait_loaded(server, "a")
        assert server.call("POST", "/api/models/local/b/load").status == 200
        cid = server.new_conversation(model="a")
        server.send(cid, "Say hi.", max_tokens=5).read_all()  # a is used after b: b is older
        b_pid = engine_pid(server, "b")
        reply = server.call("POST", "/api/models/local/c/load")
        assert reply.status == 200, reply.body
        assert reply.json()["lifecycle"] == "loaded"
        assert gone(b_pid)  # unloaded, its process gone, before c loaded
        assert loaded(server) == {"a", "c"}
    finally:
        server.stop()


def test_a_busy_model_is_never_unloaded_to_make_room(data_dir: Path) -> None:
    budget = int(one_estimate() * 2.5)
    server = local_parley(data_dir, ["a", "b", "c"], budget=budget)
    try:
        wait_loaded(server, "a")
        cid = server.new_conversation(model="a")
        stream = server.send(cid, STORY)
        stream.read_until(lambda text: len(text) > 20)
        # b is used after a's reply began: a is the least recently used, but busy.
        assert server.call("POST", "/api/models/local/b/load").status == 200
        a_pid, b_pid = engine_pid(server, "a"), engine_pid(server, "b")
        reply = server.call("POST", "/api/models/local/c/load")
        assert reply.status == 200, reply.body
        assert gone(b_pid) and not gone(a_pid)
        before = len(stream.delivered)
        stream.read_until(lambda text: len(text) > before + 40)  # the reply goes on
        assert engine_pid(server, "a") == a_pid
        stream.hang_up()
    finally:
        server.stop()


def test_a_load_that_cannot_fit_is_refused_with_its_reason(data_dir: Path) -> None:
    budget = int(one_estimate() * 1.5)  # room for one engine
    server = local_parley(data_dir, ["a", "b"], budget=budget)
    try:
        wait_loaded(server, "a")
        cid = server.new_conversation(model="a")
        stream = server.send(cid, STORY)
        stream.read_until(lambda text: len(text) > 20)
        a_pid = engine_pid(server, "a")
        refused = server.call("POST", "/api/models/local/b/load")
        assert refused.status == 503, refused.body
        error = refused.json()["error"]
        assert error["code"] == "model_wont_fit"
        assert "budget" in error["message"] and "'a'" in error["message"]  # why, and who
        assert lifecycles(server)["b"] == "not_loaded" and not gone(a_pid)
        # A reply on b is refused the same way, with the same reason, before any engine.
        other = server.new_conversation(model="b")
        on_b = server.send(other, "Say hi.", max_tokens=5)
        on_b.read_all()
        assert on_b.final["parley"]["status"] == "error"
        assert "budget" in str(on_b.final)
        before = len(stream.delivered)
        stream.read_until(lambda text: len(text) > before + 40)  # a's reply untouched
        stream.hang_up()
        # Once a is idle, it is what makes room.
        server.wait_for(lambda: lifecycles(server)["a"] == "loaded", timeout=30)
        assert server.call("POST", "/api/models/local/b/load").status == 200
        assert gone(a_pid) and loaded(server) == {"b"}
    finally:
        server.stop()


def test_a_model_a_sub_agent_uses_is_busy_and_kept(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    budget = int(one_estimate() * 1.5)
    server = local_parley(
        data_dir, ["helper", "other"], budget=budget, upstream_url=upstream.base_url
    )
    try:
        wait_loaded(server, "helper")
        task = "Write a long story about a lighthouse keeper, in many chapters."
        upstream.queue = [Script(tokens=0, tool_calls=[{"name": "delegate", "arguments":
            json.dumps({"task": task, "model": "helper"})}])]  # fmt: skip
        upstream.script = Script(texts=["done"])
        cid = server.new_conversation(model="scripted")
        stream = server.send(cid, "Ask a helper for a story.")
        message_id = stream.first["message_id"]

        def child_started() -> bool:
            parts = server.message(cid, message_id)["parts"] or []
            return any(p["type"] == "tool" and "agent" in p for p in parts)

        server.wait_for(child_started, timeout=30)
        assert lifecycles(server)["helper"] == "busy"
        refused = server.call("POST", "/api/models/local/other/load")
        assert refused.status == 503 and "'helper'" in refused.json()["error"]["message"]
        stays_true(lambda: lifecycles(server)["helper"] == "busy", during=0.2)
        stream.hang_up()
    finally:
        server.stop()
