"""Which MCP servers a chat offers, and what their tools cost (issue 42): each server's
definitions' tokens in GET /api/tools; a chat that chose some servers offers their tools
alone, and the context meter counts only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def test_a_chat_offers_the_tools_of_the_servers_it_chose(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    log = ToolLog(tmp_path / "tools.log").path
    write_config(data_dir / "mcp.json", {"t": tool_server(log), "u": tool_server(log)})
    server = Parley(data_dir, upstream.base_url, context=100_000).start()
    try:
        server.wait_for(lambda: server.status()["tools"]["ready"] == 2, timeout=30)
        costs = {
            s["name"]: s["definition_tokens"]
            for s in server.call("GET", "/api/tools").json()["servers"]
        }
        assert costs["t"] == costs["u"] > 100  # 13 tools' names, descriptions and schemas

        cid = server.new_conversation()
        both = server.call("GET", f"/api/conversations/{cid}/context").json()
        chosen = server.call(
            "PATCH", f"/api/conversations/{cid}", json_body={"tool_servers": ["t"]}
        )
        assert chosen.status == 200 and chosen.json()["tool_servers"] == ["t"]
        one = server.call("GET", f"/api/conversations/{cid}/context").json()
        assert 0 < one["tools"] < both["tools"]

        upstream.queue = [Script(texts=["hi"])]
        server.send(cid, "hello").read_all()
        offered = {t["function"]["name"] for t in upstream.records[-1].body["tools"]}
        assert "t__echo" in offered and not any(name.startswith("u__") for name in offered)

        every = server.call("PATCH", f"/api/conversations/{cid}", json_body={"tool_servers": None})
        assert every.json()["tool_servers"] is None
        bad = server.call("PATCH", f"/api/conversations/{cid}", json_body={"tool_servers": "t"})
        assert bad.status == 400 and "tool_servers" in bad.json()["error"]["message"]
    finally:
        server.stop()
