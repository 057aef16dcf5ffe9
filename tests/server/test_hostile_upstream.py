"""An upstream that sends what JSON allows but storage and clients refuse."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.errors import BackendError
from server.models.openai_chunks import parse_chunk
from server.settings import Limits
from tests.support.hostile_upstream import GzipBombUpstream, RawUpstream
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def test_surrogate_pair_split_across_chunks_is_joined_and_lone_ones_replaced(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=["a\ud83d", "\ude00b ", "\udc00 lone ", "end\ud83d"])
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    expected = "a\U0001f600b \ufffd lone end\ufffd"
    assert stream.delivered == expected
    assert stream.final["parley"]["status"] == "completed"
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == expected
    assert parley.call("GET", f"/api/conversations/{conversation_id}").status == 200


@pytest.mark.parametrize(
    "usage_json",
    [
        '{"prompt_tokens": NaN, "completion_tokens": 3}',
        '{"prompt_tokens": 1e400, "completion_tokens": Infinity}',
        '{"prompt_tokens": "7", "completion_tokens": -2}',
        '"not an object"',
        '{"completion_tokens": 3, "\\ud800": 1, "ttft_ms": "x", "completion_tokens_estimated": 1}',
    ],
)
def test_junk_usage_numbers_are_dropped(
    parley: Parley, upstream: ScriptedUpstream, usage_json: str
) -> None:
    upstream.script = Script(tokens=3, usage_json=usage_json)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()  # json.loads of every chunk: strict enough to notice a bare NaN
    assert stream.final["parley"]["status"] == "completed"
    reply = parley.call("GET", f"/api/conversations/{conversation_id}")
    assert reply.status == 200
    usage = reply.json()["messages"][1]["usage"]
    assert all(not isinstance(v, float) or v == v for v in usage.values())
    assert isinstance(usage["completion_tokens"], int) and usage["completion_tokens"] >= 0
    # Only the upstream's token counts are kept: no other key of its, nor one of Parley's own.
    assert "\ud800" not in usage
    estimated = usage.get("completion_tokens_estimated")
    assert estimated is None or estimated is True  # Parley's own, a bool (the upstream's 1: not)


def test_a_second_server_on_the_same_data_dir_is_refused(
    parley: Parley, data_dir: Path, upstream: ScriptedUpstream
) -> None:
    second = Parley(data_dir, upstream.base_url)
    with pytest.raises(RuntimeError, match="another Parley is already using"):
        second.start()
    assert parley.status()["active_turns"] == 0


@pytest.fixture
def bomb() -> Iterator[GzipBombUpstream]:
    upstream = GzipBombUpstream().start()
    yield upstream
    upstream.stop()


def test_a_compressed_stream_is_refused_not_inflated(
    data_dir: Path, bomb: GzipBombUpstream
) -> None:
    # ~50 KB of gzip that inflates to 50 MB of SSE lines: inflating it froze the server.
    parley = Parley(data_dir, bomb.base_url).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        assert stream.final["parley"]["status"] == "error"
        assert "compressed stream (gzip)" in stream.final["parley"]["error"]
        started = time.perf_counter()
        assert parley.call("GET", "/healthz").status == 200
        assert time.perf_counter() - started < 1.0  # the server was never starved
        message = parley.wait_settled(conversation_id, stream.first["message_id"])
        assert message["status"] == "error" and message["content"] == ""
    finally:
        parley.stop()


def test_a_nul_from_the_upstream_is_replaced_as_a_users_would_be_refused(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=["a\x00b ", "end"])
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_all()
    assert stream.delivered == "a\ufffdb end"
    message = parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"] == "a\ufffdb end"


def test_json_nested_too_deeply_is_a_clear_backend_error() -> None:
    with pytest.raises(BackendError, match="nested too deeply"):
        parse_chunk(b"[" * 200_000 + b"]" * 200_000)


def token_events(texts: list[str], end: bytes) -> list[bytes]:
    events = [
        b"data: " + json.dumps({"choices": [{"delta": {"content": t}}]}).encode() + end + end
        for t in texts
    ]
    done = b"data: " + json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]}).encode()
    return [*events, done + end + end, b"data: [DONE]" + end + end]


@pytest.mark.parametrize(
    "framing",
    ["CRLF", "CR", "CR then LF in the next read", "empty data lines", "comments and fields"],
)
def test_event_streams_are_read_as_the_sse_spec_says(data_dir: Path, framing: str) -> None:
    texts = ["Hello", ", ", "world"]
    if framing == "CRLF":
        pieces = token_events(texts, b"\r\n")
    elif framing == "CR":
        pieces = token_events(texts, b"\r")
    elif framing == "CR then LF in the next read":
        pieces = [p for event in token_events(texts, b"\r\n") for p in (event[:-1], event[-1:])]
    elif framing == "empty data lines":
        pieces = [p for event in token_events(texts, b"\n") for p in (b"data:\n\n", event)]
    else:
        pieces = [
            b": keep-alive\n\nevent: message\nid: 7\nretry: 10\n",
            *token_events(texts, b"\n"),
        ]
    upstream = RawUpstream(pieces).start()
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed", stream.final
        assert stream.delivered == "Hello, world"
    finally:
        parley.stop()
        upstream.stop()


def test_an_endless_line_is_refused_at_the_event_limit(data_dir: Path) -> None:
    # 13 MB of one line that never ends: buffered up to ModelLimits.upstream_line_bytes (4 MB),
    # then refused.
    upstream = RawUpstream([b'data: {"choices": "', *[b"x" * 65_536] * 200]).start()
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        assert stream.final["parley"]["status"] == "error"
        assert "longer than 4000000 bytes" in stream.final["parley"]["error"]
        started = time.perf_counter()
        assert parley.call("GET", "/healthz").status == 200
        assert time.perf_counter() - started < 1.0
    finally:
        parley.stop()
        upstream.stop()


def tool_call_events(call_id: str, name: str, arguments: list[str]) -> list[bytes]:
    """Text, then one tool call (its id and name first, its arguments in these pieces)."""

    def data(payload: object) -> bytes:
        return b"data: " + json.dumps(payload).encode() + b"\n\n"  # escapes a lone surrogate

    def call(entry: dict[str, object]) -> bytes:
        return data({"choices": [{"delta": {"tool_calls": [{"index": 0, **entry}]}}]})

    head = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return [
        data({"choices": [{"delta": {"content": "Let me look. "}}]}),
        call(head),
        *[call({"function": {"arguments": piece}}) for piece in arguments],
        data({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        b"data: [DONE]\n\n",
    ]


@pytest.mark.parametrize("which", ["id", "name"])
def test_a_lone_surrogate_in_a_tool_calls_id_or_name_is_replaced_and_the_turn_ends_whole(
    data_dir: Path, which: str
) -> None:
    call_id, name = ("call_\ud800", "lookup") if which == "id" else ("call_1", "look\ud800up")
    upstream = RawUpstream(tool_call_events(call_id, name, ["{}"])).start()
    parley = Parley(data_dir, upstream.base_url, limits=Limits(max_steps=2)).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        assert stream.events[-1] == "[DONE]" and stream.final["parley"]["status"] != "error"
        message = parley.wait_settled(conversation_id, stream.first["message_id"])
        steps = [part for part in message["parts"] if part["type"] == "tool"]
        assert steps and all(step["status"] == "error" for step in steps)  # no such tool
        assert all("\ud800" not in step["id"] + step["name"] for step in steps)
        assert parley.call("GET", f"/api/conversations/{conversation_id}").status == 200

        whole = parley.call(
            "POST",
            "/v1/chat/completions",
            json_body={"messages": [{"role": "user", "content": "hi"}], "stream": True},
        )
        assert whole.status == 200 and whole.body.rstrip().endswith(b"data: [DONE]")
        assert "\ufffd".encode() in whole.body or b"\\ufffd" in whole.body  # replaced
    finally:
        parley.stop()
        upstream.stop()


def test_tool_call_arguments_count_against_the_reply_size_limit(data_dir: Path) -> None:
    pieces = ['{"x": "', *["y" * 64_000] * 40, '"}']  # 2.56 MB of arguments
    upstream = RawUpstream(tool_call_events("call_1", "lookup", pieces)).start()
    limits = Limits(max_reply_chars=100_000)
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        assert stream.final["parley"]["status"] == "error"
        assert "tool call reached Parley's limit of 100,000" in stream.final["parley"]["error"]
        message = parley.wait_settled(conversation_id, stream.first["message_id"])
        assert message["content"] == "Let me look. "  # the text before it is kept
        assert len(json.dumps(message)) < limits.max_reply_chars  # the call is not stored
        assert upstream.requests == 1  # nor sent back to the model
    finally:
        parley.stop()
        upstream.stop()
