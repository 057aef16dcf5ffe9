"""The MCP servers themselves: configured in a file, started at launch, reported with their
state, changed through the API, restarted after a crash, stopped (with their children) at
shutdown, and a kill -9 of Parley mid-tool."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import request
from tests.support.database import stored_parts
from tests.support.parley import Parley
from tests.support.process import ServerProcess
from tests.support.tools import TOOL_COUNT, ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def servers(parley: Parley) -> dict[str, dict[str, Any]]:
    reply = parley.call("GET", "/api/tools")
    assert reply.status == 200, reply.body
    return {server["name"]: server for server in reply.json()["servers"]}


def wait_state(parley: Parley, name: str, state: str, timeout: float = 30.0) -> dict[str, Any]:
    found: dict[str, Any] = wait_for(
        lambda: (s := servers(parley).get(name)) and s["state"] == state and s, timeout
    )
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:  # reaped meanwhile
        return False


def test_a_bad_configuration_file_is_reported_and_the_app_still_runs(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "mcp.json").write_text('{"mcpServers": {"x": ', encoding="utf-8")
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        tools = parley.call("GET", "/api/tools").json()
        assert "is not valid JSON" in tools["config_error"]
        assert tools["servers"] == []
        stream = parley.send(parley.new_conversation(), "still works")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        # The unreadable file is not overwritten by a change.
        reply = parley.call("PUT", "/api/tools/servers/y", json_body={"command": "true"})
        assert reply.status == 400 and "cannot be read" in reply.json()["error"]["message"]
        assert (data_dir / "mcp.json").read_text() == '{"mcpServers": {"x": '
    finally:
        parley.stop()


def test_bad_entries_are_reported_each_with_its_reason(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    write_config(
        data_dir / "mcp.json",
        {
            "no-command": {"args": ["x"]},
            "missing": {"command": "/nonexistent/parley-mcp-server"},
            "fails": tool_server(tmp_path / "log", MCP_TEST_FAIL_AT_START="1"),
            "off": {"command": "true", "disabled": True},
            "good": tool_server(tmp_path / "log"),
        },
    )
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        wait_state(parley, "good", "ready")
        found = servers(parley)
        assert found["no-command"]["state"] == "error"
        assert "'command'" in found["no-command"]["error"]
        assert found["off"]["state"] == "disabled"
        missing = wait_state(parley, "missing", "error")
        assert "command not found" in missing["error"]
        fails = wait_state(parley, "fails", "error")
        assert "exit" in fails["error"] or "Connection closed" in fails["error"]
        assert "cannot start: scripted failure" in fails["stderr_tail"]
        assert parley.status()["tools"] == {"servers": 5, "ready": 1, "tools": TOOL_COUNT}
        assert {t["function"] for t in found["good"]["tools"]} >= {"good__echo", "good__slow"}
    finally:
        parley.stop()


def test_servers_are_added_changed_and_removed_through_the_api(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        assert parley.call("GET", "/api/tools").json()["servers"] == []
        entry = tool_server(tmp_path / "log")
        reply = parley.call("PUT", "/api/tools/servers/mine", json_body=entry)
        assert reply.status == 200, reply.body
        ready = wait_state(parley, "mine", "ready")
        on_disk = json.loads((data_dir / "mcp.json").read_text())
        assert on_disk["mcpServers"]["mine"] == entry
        pid = int(parley.services.tools.servers["mine"]._process.pid)

        # Changed: the old process is stopped, a new one started with the new entry.
        changed = {**entry, "env": {**entry["env"], "EXTRA": "1"}}
        assert parley.call("PUT", "/api/tools/servers/mine", json_body=changed).status == 200
        wait_state(parley, "mine", "ready")
        assert not alive(pid)
        assert ready["tools"]

        bad = parley.call("PUT", "/api/tools/servers/mine", json_body={"url": "ftp://x"})
        assert bad.status == 400 and "'url'" in bad.json()["error"]["message"]
        bad_name = parley.call("PUT", "/api/tools/servers/a%20b", json_body=entry)
        assert bad_name.status == 400
        unwritable = {**entry, "note": "\ud800"}  # a lone surrogate cannot be written
        reply = parley.call("PUT", "/api/tools/servers/mine", json_body=unwritable)
        assert reply.status == 400 and "not valid Unicode" in reply.json()["error"]["message"]

        assert parley.call("DELETE", "/api/tools/servers/mine").status == 204
        assert "mine" not in servers(parley)
        assert json.loads((data_dir / "mcp.json").read_text())["mcpServers"] == {}
        assert parley.call("DELETE", "/api/tools/servers/mine").status == 404
    finally:
        parley.stop()


def test_shutdown_stops_every_server_and_its_children(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    log = ToolLog(tmp_path / "log")
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path)})
    parley = Parley(data_dir, upstream.base_url).start()
    wait_state(parley, "t", "ready")
    # A child that ignores SIGTERM: it is killed all the same.
    spawn = {"name": "t__spawn", "arguments": '{"ignore_term": true}'}
    upstream.queue = [Script(tokens=0, tool_calls=[spawn])]
    upstream.script = Script(texts=["ok"])
    parley.send(parley.new_conversation(), "spawn").read_all()
    child = log.wait("spawned")["pid"]
    server_pid = int(parley.services.tools.servers["t"]._process.pid)
    assert alive(child) and alive(server_pid)
    began = time.monotonic()
    assert parley.stop()
    assert time.monotonic() - began < 10
    assert not alive(server_pid)
    wait_for(lambda: not alive(child), timeout=5)


def test_kill_9_mid_tool_then_restart_keeps_the_steps_and_marks_the_running_one_interrupted(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, processes: list[ServerProcess]
) -> None:
    log = ToolLog(tmp_path / "log")
    config = write_config(tmp_path / "elsewhere" / "tools.json", {"t": tool_server(log.path)})
    upstream.queue = [
        Script(
            texts=["Checking. "], tool_calls=[{"name": "t__echo", "arguments": '{"text": "a"}'}]
        ),
        Script(tokens=0, tool_calls=[{"name": "t__slow", "arguments": '{"seconds": 60}'}]),
    ]
    process = ServerProcess(data_dir, upstream.base_url, "--mcp-config", str(config)).start()
    processes.append(process)

    def ready() -> bool:
        tools = request(process.port, "GET", "/api/status", token=process.token).json()["tools"]
        return bool(tools["ready"] == 1)

    wait_for(ready, timeout=30)
    cid = process.new_conversation()
    stream = process.send(cid, "go")
    stream.first  # noqa: B018
    log.wait("call", tool="slow")

    def running_step_checkpointed() -> bool:
        parts = stored_parts(data_dir / "parley.sqlite3", stream.first["message_id"])
        return [(p["name"], p["status"]) for p in parts if p["type"] == "tool"] == [
            ("echo", "completed"),
            ("slow", "running"),
        ]

    wait_for(running_step_checkpointed)  # a checkpoint (every 100 ms) has the running step
    process.kill()
    stream.close()

    restarted = ServerProcess(data_dir, upstream.base_url, "--mcp-config", str(config)).start()
    processes.append(restarted)
    reply = request(restarted.port, "GET", f"/api/conversations/{cid}", token=restarted.token)
    message = reply.json()["messages"][1]
    assert (message["status"], message["ended_by"]) == ("interrupted", "crash")
    assert message["content"] == "Checking. "
    steps = [(p["name"], p["status"]) for p in message["parts"] if p["type"] == "tool"]
    assert steps == [("echo", "completed"), ("slow", "interrupted")]
    assert message["parts"][-1]["ended_at"] is not None
    # Nothing was called again after the restart.
    assert [e["tool"] for e in log.events() if e["event"] == "call"] == ["echo", "slow"]
    restarted.terminate()


def test_a_server_over_streamable_http_is_called_and_stopped(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    import socket
    import subprocess
    import sys

    from tests.support.tools import REPO

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = ToolLog(tmp_path / "log")
    served = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_tools", str(log.path), "--http", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", port)) == 0

        wait_for(listening, timeout=20)
        url = f"http://127.0.0.1:{port}/mcp"
        # The guard off: the second turn's call follows the first one's result.
        web = {"url": url, "headers": {"X-Test": "1"}, "trust": "allow", "guard": False}
        write_config(data_dir / "mcp.json", {"web": web})
        parley = Parley(data_dir, upstream.base_url).start()
        try:
            ready = wait_state(parley, "web", "ready")
            assert ready["transport"] == "http" and len(ready["tools"]) == TOOL_COUNT
            echo = {"name": "web__echo", "arguments": '{"text": "over http"}'}
            slow = {"name": "web__slow", "arguments": '{"seconds": 30, "tag": "h"}'}
            upstream.queue = [Script(tokens=0, tool_calls=[echo]), Script(texts=["ok"])]
            cid = parley.new_conversation()
            stream = parley.send(cid, "echo")
            stream.read_all()
            message = parley.message(cid, stream.first["message_id"])
            assert message["parts"][0]["result"] == "echo: over http"

            upstream.queue = [Script(tokens=0, tool_calls=[slow])]
            stream = parley.send(cid, "slow")
            stream.first  # noqa: B018
            log.wait("call", tag="h")
            stream.hang_up()
            log.wait("cancelled", tag="h", timeout=5)
            stopped = parley.wait_settled(cid, stream.first["message_id"])
            assert stopped["parts"][0]["status"] == "interrupted"
        finally:
            parley.stop()
    finally:
        served.terminate()
        served.wait(10)


def test_changes_to_one_server_at_once_leave_exactly_one_running(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    import threading

    parley = Parley(data_dir, upstream.base_url).start()
    try:
        entries = [tool_server(tmp_path / f"log{i}", RUN=str(i)) for i in range(4)]
        threads = [
            threading.Thread(
                target=parley.call, args=("PUT", "/api/tools/servers/same"), kwargs={"json_body": e}
            )
            for e in entries
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wait_state(parley, "same", "ready")
        running = parley.services.tools.servers["same"]
        on_disk = json.loads((data_dir / "mcp.json").read_text())["mcpServers"]["same"]
        assert running.entry.config == on_disk  # the file says what runs

        # Only that one process is alive among the ones started for "same".
        def alive_ones() -> list[int]:
            return [
                int(p.name)
                for p in Path("/proc").iterdir()
                if p.name.isdigit() and _runs_test_tools(p, tmp_path)
            ]

        wait_for(lambda: len(alive_ones()) == 1, timeout=10)
    finally:
        parley.stop()


def _runs_test_tools(proc: Path, tmp_path: Path) -> bool:
    try:
        command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        state = (proc / "stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return "tests.support.mcp_tools" in command and str(tmp_path) in command and state != "Z"
