"""Helpers for the tests of servers' resources, prompts and instructions: the `mcpServers`
entry that runs tests/support/mcp_resources.py, and a Parley started with such servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from server.settings import Limits
from tests.support.parley import Parley
from tests.support.tools import REPO, write_config
from tests.support.upstream import Script, ScriptedUpstream

# What tests/support/mcp_resources.py's instructions start with.
INSTRUCTIONS_MARK = "Resources-server instructions: always read docs://readme first."


def resources_server(log: Path, *options: str, only_2025: bool = False) -> dict[str, Any]:
    """An entry (trusted "allow": these tests are not of approvals)."""
    args = ["-m", "tests.support.mcp_resources", str(log), *options]
    args += ["--only-2025"] if only_2025 else []
    return {
        "command": sys.executable,
        "args": args,
        "env": {"PYTHONPATH": str(REPO)},
        "trust": "allow",
    }


def start(
    data_dir: Path,
    upstream: ScriptedUpstream,
    servers: dict[str, dict[str, Any]],
    limits: Limits | None = None,
) -> Parley:
    """Parley with `servers` configured, once they are all ready."""
    write_config(data_dir / "mcp.json", servers)
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    parley.wait_for(lambda: parley.status()["tools"]["ready"] == len(servers), timeout=30)
    return parley


def call_tool(
    parley: Parley, upstream: ScriptedUpstream, server: str, tool: str, **arguments: Any
) -> tuple[str, dict[str, Any]]:
    """A turn in which the model calls `tool` of `server`: the chat's id and the reply as
    saved."""
    called = {"name": f"{server}__{tool}", "arguments": json.dumps(arguments)}
    upstream.queue = [Script(tokens=0, tool_calls=[called]), Script(texts=["done"])]
    cid = parley.new_conversation(tools=True)
    parley.send(cid, "go").read_all()
    reply = parley.conversation(cid)["messages"][-1]
    assert reply["role"] == "assistant" and reply["status"] == "completed", reply
    return cid, reply
