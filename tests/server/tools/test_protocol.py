"""The MCP protocol as Parley speaks it: 2026-07-28 with a server that speaks it, 2025-11-25
with one that does not; Parley named in `clientInfo`; a streamable-HTTP session ended with
DELETE when Parley is done with it; a tool that requires MCP Tasks never offered. Real servers
written with the official SDK (tests/support/mcp_protocol.py), over stdio and over HTTP."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.parley import Parley
from tests.support.tools import REPO, ToolLog, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

Serve = Callable[..., dict[str, Any]]  # (log, only_2025=...) -> an `mcpServers` entry


@pytest.fixture
def serve() -> Iterator[Serve]:
    """`serve(log, transport, only_2025)`: an entry for tests/support/mcp_protocol.py. Over
    HTTP the server runs here (stopped at teardown); over stdio Parley runs it."""
    started: list[subprocess.Popen[str]] = []

    def entry(log: ToolLog, transport: str = "stdio", only_2025: bool = False) -> dict[str, Any]:
        args = ["-m", "tests.support.mcp_protocol", str(log.path)]
        args += ["--only-2025"] if only_2025 else []
        if transport == "stdio":
            env = {"PYTHONPATH": str(REPO)}
            return {"command": sys.executable, "args": args, "env": env, "trust": "allow"}
        served = subprocess.Popen(
            [sys.executable, *args, "--http"], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        started.append(served)
        assert served.stdout is not None
        line = served.stdout.readline()  # the server says it listens, or ends (EOF)
        assert line.startswith("listening on "), line
        return {"url": line.split()[-1], "trust": "allow"}

    yield entry
    for served in started:
        served.terminate()
        served.wait(10)
        if served.stdout is not None:
            served.stdout.close()


def start(data_dir: Path, upstream: ScriptedUpstream, entry: dict[str, Any]) -> Parley:
    write_config(data_dir / "mcp.json", {"p": entry})
    parley = Parley(data_dir, upstream.base_url).start()
    parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
    return parley


def call(parley: Parley, upstream: ScriptedUpstream, tool: str, **arguments: Any) -> None:
    """A turn in which the model calls `tool` of the server "p"."""
    called = {"name": f"p__{tool}", "arguments": json.dumps(arguments)}
    upstream.queue = [Script(tokens=0, tool_calls=[called]), Script(texts=["done"])]
    parley.send(parley.new_conversation(), "go").read_all()


def offered(parley: Parley) -> set[str]:
    """The tools of "p" as Parley lists them: what a turn offers the model."""
    (server,) = parley.call("GET", "/api/tools").json()["servers"]
    return {tool["name"] for tool in server["tools"]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("only_2025", "protocol"), [(False, "2026-07-28"), (True, "2025-11-25")], ids=["new", "old"]
)
def test_the_newest_protocol_the_server_speaks_is_spoken_and_parley_gives_its_name(
    data_dir: Path,
    upstream: ScriptedUpstream,
    serve: Serve,
    tmp_path: Path,
    transport: str,
    only_2025: bool,
    protocol: str,
) -> None:
    log = ToolLog(tmp_path / "log")
    parley = start(data_dir, upstream, serve(log, transport, only_2025))
    try:
        call(parley, upstream, "whoami")
    finally:
        parley.stop()
    seen = log.wait("whoami")
    assert seen["protocol"] == protocol
    version = importlib.metadata.version("parley")
    assert seen["client"] == {"name": "parley", "title": "Parley", "version": version}


@pytest.mark.parametrize("ending", ["stop", "restart", "removal"])
def test_a_streamable_http_session_is_ended_with_delete(
    data_dir: Path, upstream: ScriptedUpstream, serve: Serve, tmp_path: Path, ending: str
) -> None:
    log = ToolLog(tmp_path / "log")
    entry = serve(log, "http", only_2025=True)  # a 2025-11-25 session (2026-07-28 has none)
    parley = start(data_dir, upstream, entry)

    def sessions() -> list[str]:
        found = [e["session"] for e in log.events() if e["event"] == "http" and e["session"]]
        return list(dict.fromkeys(found))

    try:
        (session,) = sessions()
        if ending == "restart":
            changed = {**entry, "headers": {"X-Changed": "1"}}
            assert parley.call("PUT", "/api/tools/servers/p", json_body=changed).status == 200
            parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
        elif ending == "removal":
            assert parley.call("DELETE", "/api/tools/servers/p").status == 204
    finally:
        parley.stop()
    ended = log.wait("http", method="DELETE", session=session)
    assert ended["session"] == session
    if ending == "restart":
        assert len(sessions()) == 2  # and the new one was ended by the stop


def test_a_tool_that_requires_mcp_tasks_is_not_offered_and_the_user_is_told_why(
    data_dir: Path, upstream: ScriptedUpstream, serve: Serve, tmp_path: Path
) -> None:
    log = ToolLog(tmp_path / "log")
    parley = start(data_dir, upstream, serve(log, "stdio", only_2025=True))
    try:
        assert offered(parley) == {"whoami", "slow", "either", "grow"}  # "optional" is offered
        (server,) = parley.call("GET", "/api/tools").json()["servers"]
        assert any("'queued'" in line and "MCP Tasks" in line for line in server["stderr_tail"])
        upstream.queue = [Script(texts=["hi"])]
        parley.send(parley.new_conversation(), "hello").read_all()
        names = {tool["function"]["name"] for tool in upstream.records[-1].body["tools"]}
        assert "p__queued" not in names and "p__either" in names
    finally:
        parley.stop()


@pytest.mark.parametrize("only_2025", [False, True], ids=["2026-07-28", "2025-11-25"])
def test_each_change_of_the_tools_a_server_tells_is_followed(
    data_dir: Path, upstream: ScriptedUpstream, serve: Serve, tmp_path: Path, only_2025: bool
) -> None:
    log = ToolLog(tmp_path / "log")
    parley = start(data_dir, upstream, serve(log, "stdio", only_2025))
    try:
        for name in ("first", "second"):
            call(parley, upstream, "grow", name=name)
            parley.wait_for(lambda name=name: name in offered(parley), timeout=10)
    finally:
        parley.stop()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("only_2025", [False, True], ids=["2026-07-28", "2025-11-25"])
def test_a_stop_mid_tool_reaches_the_server_in_either_protocol(
    data_dir: Path,
    upstream: ScriptedUpstream,
    serve: Serve,
    tmp_path: Path,
    transport: str,
    only_2025: bool,
) -> None:
    log = ToolLog(tmp_path / "log")
    parley = start(data_dir, upstream, serve(log, transport, only_2025))
    try:
        slow = {"name": "p__slow", "arguments": '{"seconds": 30, "tag": "s"}'}
        upstream.queue = [Script(tokens=0, tool_calls=[slow])]
        cid = parley.new_conversation()
        stream = parley.send(cid, "slow")
        message_id = stream.first["message_id"]
        log.wait("call", tag="s")
        stream.hang_up()
        log.wait("cancelled", tag="s", timeout=5)
        stopped = parley.wait_settled(cid, message_id)
        assert stopped["parts"][0]["status"] == "interrupted"
    finally:
        parley.stop()
