"""A scripted OpenAI-compatible upstream on a real uvicorn socket.

It streams N tokens at a rate, can wait before the first token, stall (hold the stream open
and silent) after some tokens, fail mid-stream (drop the connection or send an error event),
or refuse the request. For every request it records when each token was sent and when its
client hung up.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Self

import anyio
import anyio.lowlevel

from server.serve import BackgroundServer, bind
from tests.support.upstream_answers import Answer, Asked, serve_answer
from tests.support.waiting import wait_for


@dataclass
class Script:
    tokens: int = 5
    rate: float | None = None  # tokens per second; None = as fast as the socket takes them
    first_delay: float = 0.0  # seconds before the first token ("prefill")
    stall_after: int | None = None  # hold the stream open, silent, after this many tokens
    fail_after: int | None = None  # fail after this many tokens
    fail_mode: Literal["drop", "error_event"] = "drop"
    status: int = 200  # anything else refuses the request with an OpenAI-style error
    error_message: str = "scripted refusal"  # what a refusal says
    finish_reason: str = "stop"
    usage: bool = True
    texts: list[str] | None = None  # exact token texts (may hold lone surrogates)
    usage_json: str | None = None  # raw JSON for the usage chunk (may hold NaN)
    token_chars: int | None = None  # each token padded to this many characters (heavy replies)
    # Tool calls made after the tokens, as {"name", "arguments" (JSON text), "id" (optional)};
    # then the finish reason is "tool_calls". Each call's arguments are sent in two pieces.
    tool_calls: list[dict[str, str]] | None = None

    def __post_init__(self) -> None:
        if self.texts is not None:
            self.tokens = len(self.texts)

    def token(self, index: int) -> str:
        if self.texts is not None:
            return self.texts[index]
        if self.token_chars is not None:
            return f"t{index} ".rjust(self.token_chars, "x")
        return f"t{index} "

    def text(self, count: int | None = None) -> str:
        return "".join(self.token(i) for i in range(self.tokens if count is None else count))


@dataclass
class Record:
    body: dict[str, Any]
    started: float
    headers: dict[str, str] = field(default_factory=dict)
    sent: list[float] = field(default_factory=list)
    hung_up_at: float | None = None
    finished: bool = False
    refused: str | None = None  # why the request was refused for the model's context

    @property
    def tokens(self) -> int:
        """What the request asks of the model's context (`requested_tokens`)."""
        return requested_tokens(self.body)

    def sent_after(self, moment: float) -> int:
        return sum(1 for t in self.sent if t > moment)


class _Failure(Exception):
    pass


class ServedOnLoopback:
    """An ASGI app of the tests' own (`__call__`), served on 127.0.0.1 at a free port."""

    _server: BackgroundServer | None = None

    def start(self) -> Self:
        self._server = BackgroundServer(self, bind("127.0.0.1", 0))  # type: ignore[arg-type]
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(timeout=5)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.port}/v1"


class ScriptedUpstream(ServedOnLoopback):
    def __init__(self) -> None:
        self.script = Script()
        self.queue: list[Script] = []  # scripts for the next requests, in order; then `script`
        # Scripts for requests whose first user message contains the key (a sub-agent's task:
        # children run at once, in no fixed order), in order; then the queue.
        self.by_task: dict[str, list[Script]] = {}
        self.records: list[Record] = []
        # Answers of requests outside the chat, by path (tests/support/upstream_answers.py),
        # and every request to one of those paths.
        self.answers: dict[str, Answer] = {}
        self.asked: list[Asked] = []
        # The model's context, in tokens (None: no limit): said in its `GET /models` entry,
        # and a request that would not fit it is refused, as a real upstream refuses it.
        self.context: int | None = None
        self._lock = threading.Lock()

    # -- waiting helpers for tests (polling a recorded fact with a deadline) ---------------

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> Any:
        return wait_for(predicate, timeout)

    def wait_hung_up(self, index: int = -1, timeout: float = 5.0) -> float:
        return float(
            self.wait_for(lambda: len(self.records) > 0 and self.records[index].hung_up_at, timeout)
        )

    def _script_for(self, body: dict[str, Any]) -> Script:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        first = users[0].get("content", "") if users else ""
        for key, scripts in self.by_task.items():
            if scripts and isinstance(first, str) and key in first:
                return scripts.pop(0)
        return self.queue.pop(0) if self.queue else self.script

    # -- ASGI ----------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["path"] in ("/_script", "/_records"):
            await self._control(scope, receive, send)
            return
        if scope["path"] in self.answers:
            raw = await _read_body(receive)
            if raw is not None:
                headers = {k.decode(): v.decode() for k, v in scope["headers"]}
                asked = Asked(scope["method"], scope["path"], raw, headers)
                self.asked.append(asked)
                await serve_answer(self.answers[scope["path"]], asked, receive, send)
            return
        if scope["path"] == "/v1/models":
            entry: dict[str, Any] = {"id": "scripted"}
            if self.context is not None:
                entry["context_length"] = self.context
            await _send_json(send, 200, {"object": "list", "data": [entry]})
            return
        if scope["path"] != "/v1/chat/completions" or scope["method"] != "POST":
            await _send_json(send, 404, {"error": {"message": "not found"}})
            return
        raw = await _read_body(receive)
        if raw is None:
            return  # hung up before the request was complete: nothing to answer
        body = json.loads(raw)
        with self._lock:
            script = self._script_for(body)
        record = Record(
            body=body,
            started=time.perf_counter(),
            headers={k.decode(): v.decode() for k, v in scope["headers"]},
        )
        with self._lock:
            self.records.append(record)
        wanted = requested_tokens(body)
        if self.context is not None and wanted > self.context:
            record.refused = f"{wanted} tokens asked of a {self.context}-token context"
            message = (
                f"This model's maximum context length is {self.context} tokens. {record.refused}."
            )
            await _send_json(send, 400, {"error": {"message": message}})
            return
        if script.status != 200:
            await _send_json(send, script.status, {"error": {"message": script.error_message}})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                record.hung_up_at = time.perf_counter()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                await self._stream(script, record, send)
            except _Failure:
                raise RuntimeError("scripted upstream dropped the connection") from None
            record.finished = True
            tg.cancel_scope.cancel()

    async def _control(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """For benchmarks that run the upstream in its own process: set the script, read records."""
        if scope["path"] == "/_script":
            fields = json.loads(await _read_body(receive) or b"{}")
            queue = [Script(**script) for script in fields.pop("queue", [])]
            by_task = {
                key: [Script(**script) for script in scripts]
                for key, scripts in fields.pop("by_task", {}).items()
            }
            self.script = Script(**fields)
            with self._lock:
                self.queue = queue
                self.by_task = by_task
                self.records.clear()
            await _send_json(send, 200, {"ok": True})
            return
        records = [
            {
                "sent": r.sent,
                "hung_up_at": r.hung_up_at,
                "finished": r.finished,
                "started": r.started,
            }
            for r in self.records
        ]
        await _send_json(send, 200, {"records": records})

    async def _stream(self, script: Script, record: Record, send: Any) -> None:
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            payload = {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": created,
                "model": record.body.get("model", "scripted"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return b"data: " + json.dumps(payload).encode() + b"\n\n"

        async def emit(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        await emit(chunk({"role": "assistant", "content": ""}))
        if script.first_delay:
            await anyio.sleep(script.first_delay)
        interval = 1.0 / script.rate if script.rate else 0.0
        next_at = time.perf_counter()
        for index in range(script.tokens):
            if script.stall_after is not None and index >= script.stall_after:
                await anyio.sleep_forever()
            if script.fail_after is not None and index >= script.fail_after:
                if script.fail_mode == "error_event":
                    await emit(b'data: {"error": {"message": "scripted failure"}}\n\n')
                    await anyio.sleep_forever()
                raise _Failure()
            if interval:
                next_at += interval
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await anyio.sleep(delay)
            else:
                await anyio.lowlevel.checkpoint()
            await emit(chunk({"content": script.token(index)}))
            record.sent.append(time.perf_counter())
        if script.stall_after is not None:
            await anyio.sleep_forever()
        finish = script.finish_reason
        for index, call in enumerate(script.tool_calls or []):
            arguments = call.get("arguments", "{}")
            half = len(arguments) // 2
            first = {
                "index": index,
                "id": call.get("id", f"call_{len(self.records)}_{index}"),
                "type": "function",
                "function": {"name": call["name"], "arguments": arguments[:half]},
            }
            await emit(chunk({"tool_calls": [first]}))
            rest = {"index": index, "function": {"arguments": arguments[half:]}}
            await emit(chunk({"tool_calls": [rest]}))
            finish = "tool_calls"
        usage = {
            "prompt_tokens": 7,
            "completion_tokens": script.tokens,
            "total_tokens": 7 + script.tokens,
        }
        await emit(chunk({}, finish))
        if script.usage_json is not None:
            await emit(b'data: {"choices": [], "usage": ' + script.usage_json.encode() + b"}\n\n")
        elif script.usage:
            await emit(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        await emit(b"data: [DONE]\n\n")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def requested_tokens(body: dict[str, Any]) -> int:
    """The prompt's tokens and the reply's `max_tokens`, as an upstream that refuses what
    would not fit adds them up. Counted as Parley estimates (3 characters a token, and 6 a
    message for the chat template): stricter than a real tokenizer on English text."""
    prompt = sum(-(-len(str(m.get("content") or "")) // 3) + 6 for m in body["messages"])
    if body.get("tools"):
        prompt += -(-len(json.dumps(body["tools"])) // 3)
    return prompt + int(body.get("max_tokens") or 0)


async def _read_body(receive: Any) -> bytes | None:
    """The request body; None if the client hung up while sending it."""
    raw = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        raw += message.get("body", b"")
        if not message.get("more_body"):
            return raw


async def _send_json(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    """Run the scripted upstream alone (benchmarks): print its base URL, serve until killed."""
    import sys

    import uvicorn

    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = bind("127.0.0.1", port)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(ScriptedUpstream(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
