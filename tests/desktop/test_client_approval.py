"""The desktop's client and a call awaiting approval (issue 17): the stream's approval event
reaches the window as a ReplyApproval, and `decide_tool_call` answers it. No widgets: the
client alone, on its own asyncio loop, against a real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from desktop.client import ParleyClient, ReplyApproval, ReplyEnd, ReplyEvent, ReplyStep
from desktop.errors import ClientError
from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def test_an_approval_reaches_the_client_and_its_decision_runs_the_call(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    log = ToolLog(tmp_path / "tools.log")
    write_config(data_dir / "mcp.json", {"t": tool_server(log.path, trust=None)})
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        parley.wait_for(lambda: parley.status()["tools"]["ready"] == 1, timeout=30)
        danger = {"name": "t__danger", "arguments": json.dumps({"target": "x"})}
        upstream.queue = [Script(tokens=0, tool_calls=[danger]), Script(texts=["Done."])]
        events = asyncio.run(converse(parley))
    finally:
        parley.stop()
    approval = next(e for e in events if isinstance(e, ReplyApproval)).approval
    assert (approval["server"], approval["tool"]) == ("t", "danger")
    assert json.loads(approval["arguments"]) == {"target": "x"}
    statuses = [e.part["status"] for e in events if isinstance(e, ReplyStep)]
    assert statuses == ["awaiting_approval", "running", "completed"]
    assert isinstance(events[-1], ReplyEnd) and events[-1].status == "completed"
    assert log.find("call", tool="danger") is not None


async def converse(parley: Parley) -> list[ReplyEvent]:
    client = ParleyClient(f"http://127.0.0.1:{parley.port}", parley.token)
    try:
        conversation = await client.create_conversation()
        stream = await client.send(conversation["id"], "do it")
        events: list[ReplyEvent] = []
        async for event in stream.events():
            events.append(event)
            if isinstance(event, ReplyApproval):
                call_id = event.approval["call_id"]
                answer = await client.decide_tool_call(conversation["id"], call_id, "allow")
                assert answer["step"]["status"] == "running"
                with pytest.raises(ClientError) as again:
                    await client.decide_tool_call(conversation["id"], call_id, "deny")
                assert again.value.status == 409
        return events
    finally:
        await client.aclose()


def test_ids_of_dots_alone_reach_their_route(data_dir: Path, upstream: ScriptedUpstream) -> None:
    """Issue 37: the client escapes dots in a path segment (httpx would resolve "." and ".."),
    so a decision on such an id reaches the tool-calls route (a 404 for an unknown call) and a
    tool named ".." reaches its trust route, not another one (405)."""

    async def ask() -> list[int | None]:
        client = ParleyClient(f"http://127.0.0.1:{parley.port}", parley.token)
        statuses: list[int | None] = []
        try:
            conversation = await client.create_conversation()
            for call_id in (".", ".."):
                with pytest.raises(ClientError) as refused:
                    await client.decide_tool_call(conversation["id"], call_id, "allow")
                statuses.append(refused.value.status)
            with pytest.raises(ClientError) as refused:
                await client.set_tool_trust("t", "..", "ask")
            statuses.append(refused.value.status)
        finally:
            await client.aclose()
        return statuses

    parley = Parley(data_dir, upstream.base_url).start()
    try:
        assert asyncio.run(ask()) == [404, 404, 404]
    finally:
        parley.stop()
