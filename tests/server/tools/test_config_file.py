"""The MCP configuration file is the user's too (issue 37): edited by hand while Parley runs,
it is picked up, never overwritten by a stale copy, never written over when broken on disk;
a symlink stays a symlink and the file keeps its mode."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.agent.test_approvals import DANGER, approval_of, calls, decide
from tests.server.tools.test_tool_servers import servers, wait_state
from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SECRET_HEADERS = {"Authorization": "Bearer hand-written-secret"}


@pytest.fixture
def tool_log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "tools.log")


@pytest.fixture
def config(data_dir: Path) -> Path:
    return data_dir / "mcp.json"


@pytest.fixture
def running(data_dir: Path, upstream: ScriptedUpstream, config: Path) -> Iterator[Parley]:
    write_config(config, {})
    parley = Parley(data_dir, upstream.base_url).start()
    yield parley
    parley.stop()


def edit_by_hand(config: Path, change: Any) -> None:
    document = json.loads(config.read_text())
    change(document["mcpServers"])
    config.write_text(json.dumps(document, indent=4))


def test_an_entry_added_by_hand_is_picked_up_and_kept_by_a_change_from_settings(
    running: Parley, config: Path, tool_log: ToolLog
) -> None:
    by_hand = {"url": "http://127.0.0.1:9/mcp", "headers": SECRET_HEADERS, "disabled": True}
    edit_by_hand(config, lambda servers: servers.update(remote=by_hand))
    wait_state(running, "remote", "disabled", timeout=10)

    reply = running.call("PUT", "/api/tools/servers/mine", json_body=tool_server(tool_log.path))
    assert reply.status == 200, reply.body
    on_disk = json.loads(config.read_text())["mcpServers"]
    assert on_disk["remote"] == by_hand and "mine" in on_disk
    assert set(servers(running)) == {"remote", "mine"}


def test_servers_removed_or_changed_by_hand_follow_the_file(
    running: Parley, config: Path, tool_log: ToolLog
) -> None:
    entry = tool_server(tool_log.path)
    assert running.call("PUT", "/api/tools/servers/mine", json_body=entry).status == 200
    wait_state(running, "mine", "ready")
    pid = running.services.tools.servers["mine"]._process.pid
    edit_by_hand(config, lambda servers: servers["mine"].update(disabled=True))
    wait_state(running, "mine", "disabled", timeout=10)
    edit_by_hand(config, lambda servers: servers.pop("mine"))
    wait_for(lambda: "mine" not in servers(running), timeout=10)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_file_broken_by_hand_is_never_written_over_and_its_servers_keep_running(
    running: Parley, config: Path, tool_log: ToolLog
) -> None:
    assert running.call("PUT", "/api/tools/servers/mine", json_body=tool_server(tool_log.path))
    wait_state(running, "mine", "ready")
    broken = '{"mcpServers": {"mine": {"command": "x",'  # saved half-way through an edit
    config.write_text(broken)
    wait_for(lambda: running.call("GET", "/api/tools").json()["config_error"], timeout=10)
    assert servers(running)["mine"]["state"] == "ready"
    reply = running.call("PUT", "/api/tools/servers/other", json_body={"command": "true"})
    assert reply.status == 400
    assert "as it is on disk now" in reply.json()["error"]["message"]
    assert running.call("DELETE", "/api/tools/servers/mine").status == 400
    assert config.read_text() == broken
    # Mended by hand: picked up, and Settings may change it again.
    config.write_text(json.dumps({"mcpServers": {"mine": tool_server(tool_log.path)}}))
    wait_for(lambda: running.call("GET", "/api/tools").json()["config_error"] is None, 10)
    assert running.call("DELETE", "/api/tools/servers/mine").status == 204


def test_a_symlinked_file_stays_a_link_and_keeps_its_mode(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, tool_log: ToolLog
) -> None:
    dotfiles = tmp_path / "dotfiles" / "mcp.json"
    write_config(dotfiles, {"kept": {"command": "true", "disabled": True}})
    dotfiles.chmod(0o640)
    data_dir.mkdir(parents=True)
    (data_dir / "mcp.json").symlink_to(dotfiles)
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        reply = parley.call("PUT", "/api/tools/servers/mine", json_body=tool_server(tool_log.path))
        assert reply.status == 200, reply.body
    finally:
        parley.stop()
    assert (data_dir / "mcp.json").is_symlink()
    assert set(json.loads(dotfiles.read_text())["mcpServers"]) == {"kept", "mine"}
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o640


def test_a_new_file_is_the_users_alone(running: Parley, config: Path) -> None:
    config.unlink()
    assert running.call("PUT", "/api/tools/servers/x", json_body={"command": "true"}).status == 200
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_a_fifo_in_place_of_the_file_is_an_error_not_a_hang(
    data_dir: Path, upstream: ScriptedUpstream, config: Path
) -> None:
    data_dir.mkdir(parents=True)
    os.mkfifo(config)  # nobody writes to it: a blocking read would hang the start
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        assert "not a regular file" in parley.call("GET", "/api/tools").json()["config_error"]
    finally:
        parley.stop()


def test_a_trust_changed_by_hand_ends_the_chat_grant(
    data_dir: Path, upstream: ScriptedUpstream, config: Path, tool_log: ToolLog
) -> None:
    write_config(config, {"t": tool_server(tool_log.path, trust=None)})
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        wait_state(parley, "t", "ready")
        pid = parley.services.tools.servers["t"]._process.pid
        upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["one"])]
        cid = parley.new_conversation()
        stream = parley.send(cid, "one")
        approval = approval_of(stream)
        allowed = decide(parley, cid, approval["call_id"], decision="allow", remember="chat")
        assert allowed.status == 200
        stream.read_all()
        edit_by_hand(config, lambda servers: servers["t"].update(toolTrust={"danger": "ask"}))
        wait_for(lambda: servers(parley)["t"]["config"].get("toolTrust"), timeout=10)
        upstream.queue = [Script(tokens=0, tool_calls=[DANGER]), Script(texts=["two"])]
        stream = parley.send(cid, "two")
        approval = approval_of(stream)  # asked again
        assert decide(parley, cid, approval["call_id"], decision="deny").status == 200
        stream.read_all()
        assert len(calls(tool_log)) == 1
        assert parley.services.tools.servers["t"]._process.pid == pid  # not restarted
    finally:
        parley.stop()
