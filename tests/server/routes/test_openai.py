"""The OpenAI-compatible API, driven by the real `openai` package over a real socket."""

from __future__ import annotations

import json

import openai
import pytest

from server.models.local import LocalBackend
from tests.support.client import request
from tests.support.parley import MODEL, Parley
from tests.support.upstream import Script, ScriptedUpstream


def client(server: Parley, token: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"http://127.0.0.1:{server.port}/v1",
        api_key=token or server.token,
        max_retries=0,
        timeout=60,  # a busy machine answers late; a hang is ended by the per-test timeout
    )


def test_models_lists_upstream_and_bundled_models(parley: Parley) -> None:
    models = [m.id for m in client(parley).models.list()]
    assert models == [MODEL, "smollm2-135m-instruct"]


def test_non_streaming_completion(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=4)
    completion = client(parley).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=10, temperature=0.5
    )
    assert completion.choices[0].message.content == "t0 t1 t2 t3 "
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens == 4
    sent = upstream.records[0].body
    assert (sent["max_tokens"], sent["temperature"]) == (10, 0.5)
    parley.wait_idle()


def test_streaming_completion(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=6, finish_reason="length")
    stream = client(parley).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True, stop=["END"]
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "t0 t1 t2 t3 t4 t5 "
    assert chunks[-1].choices[0].finish_reason == "length"
    assert upstream.records[0].body["stop"] == ["END"]
    # Stateless: nothing was stored as a conversation.
    assert parley.call("GET", "/api/conversations").json()["conversations"] == []


def test_closing_the_sdk_stream_interrupts_the_upstream(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=10_000, rate=200)
    stream = client(parley).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
    )
    received = 0
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
        if received >= 3:
            break
    stream.close()
    upstream.wait_hung_up()
    parley.wait_idle()
    assert not upstream.records[0].finished


def test_upstream_error_reaches_the_sdk_as_an_error(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=5, fail_after=2, fail_mode="error_event")
    with pytest.raises(openai.APIError, match="scripted failure"):
        for _ in client(parley).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        ):
            pass
    with pytest.raises(openai.APIStatusError) as caught:
        client(parley).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 502
    parley.wait_idle()


def test_sdk_sees_auth_and_unknown_model_errors(parley: Parley) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(parley, token="wrong").models.list()
    with pytest.raises(openai.NotFoundError, match="unknown model"):
        client(parley).chat.completions.create(
            model="nope", messages=[{"role": "user", "content": "hi"}]
        )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"messages": []},
        {"messages": "hi"},
        {"messages": [{"role": "user"}]},
        {"messages": [{"role": "tool", "content": "x"}]},
        {"messages": [{"role": "user", "content": 3}]},
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
        {"messages": [{"role": "assistant", "content": "last"}]},
        {"messages": [{"role": "user", "content": "\ud800"}]},
        {"messages": [{"role": "user", "content": "a\u0000b"}]},
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0},
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10**12},
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2.5},
        {"messages": [{"role": "user", "content": "hi"}], "max_tokens": True},
        {"messages": [{"role": "user", "content": "hi"}], "temperature": 7},
        {"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"},
        {"messages": [{"role": "user", "content": "hi"}], "stop": ["a", "b", "c", "d", "e"]},
        {"messages": [{"role": "user", "content": "hi"}], "stop": [""]},
        {"messages": [{"role": "user", "content": "hi"}], "stream": "yes"},
        {"messages": [{"role": "user", "content": "hi"}], "n": 3},
        {"messages": [{"role": "user", "content": "hi"}], "model": 5},
    ],
)
def test_bad_completion_bodies_are_400(
    parley: Parley, upstream: ScriptedUpstream, body: dict[str, object]
) -> None:
    raw = json.dumps(body).encode("utf-8", "surrogatepass")
    reply = request(
        parley.port,
        "POST",
        "/v1/chat/completions",
        token=parley.token,
        body=raw,
        headers={"Content-Type": "application/json"},
    )
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert upstream.records == []
    assert parley.status()["active_turns"] == 0


def test_text_parts_and_developer_role_are_accepted(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    client(parley).chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "he"}, {"type": "text", "text": "llo"}],
            },
        ],
    )
    assert upstream.records[0].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
    ]


def test_local_model_through_the_sdk_and_stopping_it(local_parley: Parley) -> None:
    sdk = client(local_parley)
    completion = sdk.chat.completions.create(
        model="smollm2-135m-instruct",
        messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=8,
    )
    assert completion.choices[0].message.content
    assert completion.usage is not None and 0 < completion.usage.completion_tokens <= 8
    assert completion.choices[0].finish_reason in ("stop", "length")

    backend = local_parley.services.models.resolve(None).backend
    assert isinstance(backend, LocalBackend)
    stream = sdk.chat.completions.create(
        model="smollm2-135m-instruct",
        messages=[{"role": "user", "content": "Write a very long story about a dragon."}],
        stream=True,
    )
    received = 0
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
        if received >= 5:
            break
    stream.close()
    local_parley.wait_idle()
    stats = backend.generations[-1]
    assert stats.stop_requested_at is not None and stats.returned_at is not None
    assert len(stats.token_times) < 100  # stopped long before the story's end
