"""Earlier turns' tool calls and results go back to the model (issue 42): a chat that read
something with a tool in one turn can use it in the next, within a budget that is a share of
the model's context; a turn that offers no tools gets them as text. The real server, the
scripted upstream and the tests' MCP server; plus the budget's rule on its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.agent.history import as_sent_by_message, results_budget
from server.limits import Limits
from server.types import ChatMessage, PartJSON
from tests.support.parley import Parley
from tests.support.tools import ToolLog, tool_server, untrusted_text, write_config
from tests.support.upstream import Script, ScriptedUpstream


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


SMALL_CONTEXT = 4_000  # tokens: earlier results get 3,000 characters of it


def started(data_dir: Path, upstream: ScriptedUpstream, log: Path, context: int | None) -> Parley:
    write_config(data_dir / "mcp.json", {"t": tool_server(ToolLog(log).path)})
    server = Parley(data_dir, upstream.base_url, context=context).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    return server


@pytest.fixture
def agent(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Parley]:
    server = started(data_dir, upstream, tmp_path / "t.log", None)
    yield server
    server.stop()


@pytest.fixture
def small_agent(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Parley]:
    server = started(data_dir, upstream, tmp_path / "t.log", SMALL_CONTEXT)
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


@pytest.mark.slow
def test_in_a_small_context_an_earlier_result_is_left_out_with_a_note_naming_its_call(
    small_agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [  # 3,600 characters: within 16,000, beyond a quarter of 4,000 tokens
        Script(texts=["Reading. "], tool_calls=[tool("big", chars=3_600)]),
        Script(texts=["I read it."]),
    ]
    cid = small_agent.new_conversation()
    small_agent.send(cid, "read the file").read_all()
    meter = small_agent.call("GET", f"/api/conversations/{cid}/context").json()
    assert meter["history"] < 1_000 // 3  # the note, not the 3,600 characters
    assert meter["used"] == meter["system"] + meter["history"] + meter["tools"]

    upstream.queue = [Script(texts=["Again, then."])]
    small_agent.send(cid, "what did it say?").read_all()
    sent = upstream.records[-1].body["messages"]
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert result["content"] == (
        "[An earlier result of 3,600 characters from t__big(chars=3600), left out to save "
        "room. Call the tool again if you need it.]"
    )


@pytest.mark.slow
def test_a_turn_offering_no_tools_gets_earlier_calls_and_results_as_text(
    agent: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.queue = [
        Script(texts=["Reading. "], tool_calls=[tool("echo", text="BLUE-HERON")]),
        Script(texts=["I read it."]),
    ]
    cid = agent.new_conversation()
    agent.send(cid, "read the file").read_all()
    patched = agent.call("PATCH", f"/api/conversations/{cid}", json_body={"tools": False})
    assert patched.status == 200, patched.body

    upstream.queue = [Script(texts=["It said BLUE-HERON."])]
    agent.send(cid, "what did it say?").read_all()
    body = upstream.records[-1].body
    assert "tools" not in body
    sent = body["messages"]
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "user"]
    assert all("tool_calls" not in m for m in sent)
    said = sent[-2]["content"]
    assert said.startswith('Reading. \n[called t.echo(text="BLUE-HERON") → [Untrusted data')
    assert "echo: BLUE-HERON" in said and said.endswith("]\n\n\nI read it.")


def with_tool_history(
    messages: list[ChatMessage], tools_ok: bool, *, context: int | None
) -> list[ChatMessage]:
    return [m for group in as_sent_by_message(messages, tools_ok, context=context) for m in group]


def stored_reply(*results: str, arguments: str = "{}") -> ChatMessage:
    parts: list[PartJSON] = []
    for index, result in enumerate(results):
        parts.append(
            {
                "type": "tool", "id": f"c{index}", "server": "t", "name": "read",
                "arguments": arguments, "status": "completed", "result": result,
                "started_at": 0.0, "ended_at": 1.0,
            }
        )  # fmt: skip
    parts.append({"type": "text", "text": "done"})
    return {"role": "assistant", "content": "done", "parts": parts}


def test_results_are_kept_newest_first_within_the_budget_and_older_ones_say_so() -> None:
    big = "x" * (Limits.history_results_chars - 10)
    history: list[ChatMessage] = [
        {"role": "user", "content": "first"},
        stored_reply("old " * 100),
        {"role": "user", "content": "second"},
        stored_reply(big),
        {"role": "user", "content": "third"},
    ]
    sent = with_tool_history(history, tools_ok=True, context=None)
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "left out to save room" in results[0] and "400 characters" in results[0]
    assert untrusted_text(results[1]) == big  # the newest, whole
    assert [m["role"] for m in sent] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
        "user",
    ]  # fmt: skip


def test_the_results_budget_is_a_quarter_of_the_models_context_at_most_16000_chars() -> None:
    assert results_budget(None) == Limits.history_results_chars
    assert results_budget(2_048) == 512 * 3
    assert results_budget(1_000_000) == Limits.history_results_chars
    history: list[ChatMessage] = [
        {"role": "user", "content": "q"},
        stored_reply("x" * 2_000),
        {"role": "user", "content": "again"},
    ]
    unknown = with_tool_history(history, tools_ok=True, context=None)
    assert untrusted_text(unknown[2]["content"]) == "x" * 2_000
    small = with_tool_history(history, tools_ok=True, context=2_048)
    assert small[2]["content"].startswith("[An earlier result of 2,000 characters")


def test_a_result_left_out_names_its_call_so_the_model_can_make_it_again() -> None:
    arguments = json.dumps({"path": "notes/section-2.md", "text": "y" * 500})
    history: list[ChatMessage] = [
        {"role": "user", "content": "q"},
        stored_reply("x" * 2_000, arguments=arguments),
    ]
    (result,) = [m for m in with_tool_history(history, True, context=2_048) if m["role"] == "tool"]
    said = result["content"]
    assert said.startswith('[An earlier result of 2,000 characters from t__read(path="notes/')
    assert 'text="yyyy' in said and "…" in said and len(said) < 400  # the arguments cut short
    assert said.endswith("left out to save room. Call the tool again if you need it.]")


def test_an_older_calls_long_arguments_are_cut_with_its_result_left_out() -> None:
    # A write of 20,000 characters, then a newer call: the old one's content is not sent again
    # every turn (its arguments count with its result against the budget).
    written = json.dumps({"path": "draft.md", "content": "z" * 20_000})
    history: list[ChatMessage] = [
        {"role": "user", "content": "write it"},
        stored_reply("written", arguments=written),
        {"role": "user", "content": "read it"},
        stored_reply("z" * 100, arguments=json.dumps({"path": "draft.md"})),
        {"role": "user", "content": "and now?"},
    ]
    sent = with_tool_history(history, True, context=8_000)
    old, new = [m["tool_calls"][0]["function"]["arguments"] for m in sent if m.get("tool_calls")]
    assert json.loads(new) == {"path": "draft.md"}  # the newest, whole
    cut = json.loads(old)  # still a JSON object the model could call with
    assert cut["path"] == "draft.md" and len(old) < 300
    assert cut["content"].endswith("… [19,940 characters left out]")
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert results[0].startswith("[An earlier result of 7 characters from t__read(path=")
    assert len(json.dumps(sent)) < 2_000

    # The user denied it (or stopped it): no result to leave out, but its arguments still go.
    denied = stored_reply("Not run: the user denied it.", arguments=written)
    step = denied["parts"][0]
    assert step["type"] == "tool"
    step["status"] = "denied"
    history[1] = denied
    sent = with_tool_history(history, True, context=8_000)
    old = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]["function"]["arguments"]
    assert len(old) < 300 and json.loads(old)["content"].endswith("characters left out]")


def test_a_model_offered_no_tools_gets_each_call_and_result_as_text_in_the_reply() -> None:
    history: list[ChatMessage] = [
        {"role": "user", "content": "q"},
        stored_reply("old " * 1_000, "the result", arguments='{"path": "a.md"}'),
        {"role": "user", "content": "again"},
    ]
    sent = with_tool_history(history, tools_ok=False, context=2_048)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert set(sent[1]) == {"role", "content"}  # no tool_calls, no parts
    first, second, text = sent[1]["content"].split("\n", 2)
    assert (
        first == '[called t.read(path="a.md"): its result (4,000 characters) left out to save room]'
    )
    assert second.startswith('[called t.read(path="a.md") → [Untrusted data from the tool read')
    assert "\nthe result\n" in text and text.endswith("]\ndone")


def test_a_reply_without_steps_is_given_as_its_text() -> None:
    plain: ChatMessage = {
        "role": "assistant", "content": "hi", "parts": [{"type": "text", "text": "hi"}]
    }  # fmt: skip
    sent = with_tool_history([{"role": "user", "content": "q"}, plain], False, context=None)
    assert sent == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "hi"}]
