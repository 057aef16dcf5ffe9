"""`/v1/chat/completions` with tools: passed through to the upstream, calls back to the
client (which runs its own tools), with the real `openai` package, streamed and not."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.support.parley import MODEL, Parley
from tests.support.upstream import Script, ScriptedUpstream

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ASKED = [{"role": "user", "content": "Weather in Paris?"}]


def client(server: Parley) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"http://127.0.0.1:{server.port}/v1", api_key=server.token, max_retries=0
    )


def weather_call() -> Script:
    return Script(tokens=0, tool_calls=[{"name": "get_weather", "arguments": '{"city": "Paris"}'}])


def test_tools_pass_through_and_calls_come_back_not_streamed(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = weather_call()
    completion = client(parley).chat.completions.create(
        model=MODEL, messages=ASKED, tools=[WEATHER], tool_choice="auto"
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (called,) = choice.message.tool_calls or []
    assert called.function.name == "get_weather"
    assert json.loads(called.function.arguments) == {"city": "Paris"}
    sent = upstream.records[0].body
    assert sent["tools"] == [WEATHER] and sent["tool_choice"] == "auto"

    # The client ran its tool: its call and the result go back to the model as they were.
    upstream.script = Script(texts=["Sunny."])
    history: list[Any] = [
        *ASKED,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": called.id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": called.function.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": called.id, "content": "sunny, 21 C"},
    ]
    answer = client(parley).chat.completions.create(model=MODEL, messages=history, tools=[WEATHER])
    assert answer.choices[0].message.content == "Sunny."
    messages = upstream.records[1].body["messages"]
    assert messages[1]["content"] is None
    assert messages[1]["tool_calls"][0]["id"] == called.id
    assert messages[2] == {"role": "tool", "content": "sunny, 21 C", "tool_call_id": called.id}
    parley.wait_idle()


def test_tools_pass_through_and_calls_come_back_streamed(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = weather_call()
    chunks = list(
        client(parley).chat.completions.create(
            model=MODEL, messages=ASKED, tools=[WEATHER], stream=True
        )
    )
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            call["name"] += delta.function.name or "" if delta.function else ""
            call["arguments"] += delta.function.arguments or "" if delta.function else ""
    assert list(calls.values()) == [
        {"id": "call_1_0", "name": "get_weather", "arguments": '{"city": "Paris"}'}
    ]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    # Stateless: the conversation list stays empty.
    assert parley.call("GET", "/api/conversations").json()["conversations"] == []


@pytest.mark.parametrize(
    "extra",
    [
        {"tools": "x"},
        {"tools": [{"type": "function"}]},
        {"tools": [{"type": "function", "function": {"name": "bad name"}}]},
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": 3}}]},
        {"tools": [WEATHER], "tool_choice": "sometimes"},
        {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "other"}}},
        {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": ["x"]}}},
        {"tools": [{"type": "function", "function": {"name": "f", "description": "\ud800"}}]},
    ],
)
def test_bad_tools_are_400(parley: Parley, extra: dict[str, Any]) -> None:
    reply = parley.call("POST", "/v1/chat/completions", json_body={"messages": ASKED, **extra})
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "invalid_field"


@pytest.mark.parametrize(
    "message",
    [
        {"role": "tool", "content": "x"},
        {"role": "tool", "content": "x", "tool_call_id": 3},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        {"role": "assistant", "content": None, "tool_calls": "x"},
        {"role": "assistant", "content": None},
        {"role": "tool", "content": "x", "tool_call_id": "\ud800"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "f\ud800", "arguments": "{}"}}],
        },
    ],
)
def test_bad_tool_messages_are_400(parley: Parley, message: dict[str, Any]) -> None:
    body = {"messages": [*ASKED, message, {"role": "user", "content": "and?"}]}
    reply = parley.call("POST", "/v1/chat/completions", json_body=body)
    assert reply.status == 400, reply.body
