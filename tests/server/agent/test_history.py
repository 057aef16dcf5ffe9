"""Earlier turns' tool calls and results go back to the model (issue 42): a chat that read
something with a tool in one turn can use it in the next. The real server, the scripted
upstream and the tests' MCP server; plus the budget's rule on its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.history import RESULTS_BUDGET_CHARS, with_tool_history
from server.types import ChatMessage, PartJSON
from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, untrusted_text, write_config
from tests.support.upstream import Script, ScriptedUpstream


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Parley]:
    write_config(data_dir / "mcp.json", {"t": tool_server(ToolLog(tmp_path / "t.log").path)})
    server = Parley(data_dir, upstream.base_url).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    yield server
    server.stop()


@pytest.mark.slow
def test_a_tool_result_of_one_turn_is_given_to_the_model_in_the_next(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(texts=["Reading. "], tool_calls=[tool("echo", text="section 2 says: BLUE-HERON")]),
        Script(texts=["I read it."]),
        Script(texts=["Section 2 is about a heron."]),
    ]
    cid = agent.new_conversation()
    agent.send(cid, "read the file").read_all()
    agent.send(cid, "now summarise section 2 of the file you read").read_all()

    sent = upstream.records[-1].body["messages"]
    roles = [m["role"] for m in sent if m["role"] != "system"]
    assert roles[-5:] == ["user", "assistant", "tool", "assistant", "user"]
    called = next(m for m in sent if m.get("tool_calls"))
    assert called["content"] == "Reading. "
    assert called["tool_calls"][0]["function"]["name"] == "t__echo"
    result = next(m for m in sent if m["role"] == "tool")
    assert result["tool_call_id"] == called["tool_calls"][0]["id"]
    assert untrusted_text(result["content"]) == "echo: section 2 says: BLUE-HERON"
    after = sent[sent.index(result) + 1]
    assert (after["role"], after["content"]) == ("assistant", "\n\nI read it.")
    assert all("parts" not in m for m in sent)  # Parley's own field never leaves


def stored_reply(*results: str) -> ChatMessage:
    parts: list[PartJSON] = []
    for index, result in enumerate(results):
        parts.append(
            {
                "type": "tool", "id": f"c{index}", "server": "t", "name": "read",
                "arguments": "{}", "status": "completed", "result": result,
                "started_at": 0.0, "ended_at": 1.0,
            }
        )  # fmt: skip
    parts.append({"type": "text", "text": "done"})
    return {"role": "assistant", "content": "done", "parts": parts}


def test_results_are_kept_newest_first_within_the_budget_and_older_ones_say_so() -> None:
    big = "x" * (RESULTS_BUDGET_CHARS - 10)
    history: list[ChatMessage] = [
        {"role": "user", "content": "first"},
        stored_reply("old " * 100),
        {"role": "user", "content": "second"},
        stored_reply(big),
        {"role": "user", "content": "third"},
    ]
    sent = with_tool_history(history, tools_ok=True)
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "left out to save room" in results[0] and "400 characters" in results[0]
    assert untrusted_text(results[1]) == big  # the newest, whole
    assert [m["role"] for m in sent] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
        "user",
    ]  # fmt: skip


def test_a_model_offered_no_tools_gets_the_replies_text_alone() -> None:
    history: list[ChatMessage] = [{"role": "user", "content": "q"}, stored_reply("r")]
    sent = with_tool_history(history, tools_ok=False)
    assert sent == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "done"}]
