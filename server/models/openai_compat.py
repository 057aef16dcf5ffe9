"""A backend that relays any OpenAI-compatible server (Ollama, llama-server, vLLM, OpenAI).

Interrupting it closes the upstream HTTP response, so the upstream sees its client hang up
and stops generating: cancelling the consuming task unwinds `client.stream(...)`, which
closes the connection (httpcore shields that close from the cancellation).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anyio.to_thread
import httpx

from server.errors import BackendError
from server.limits import ModelLimits
from server.models.base import (
    ChatRequest,
    ModelState,
    StopSignal,
    StreamEnd,
    StreamEvent,
    TextDelta,
)
from server.models.context import estimate_tokens
from server.models.openai_chunks import parse_chunk, read_chunk, tool_call_deltas
from server.models.relay_duty import DutyCycle
from server.models.upstream_check import describe_transport_error, list_models, upstream_client
from server.models.upstream_context import ContextAsker, ContextQuestion
from server.settings import Limits, UpstreamSettings
from server.text import TextJoiner, valid_unicode
from server.types import ChatMessage, Continued, FinishReason, Usage
from server.types.sse import EventSplitter


def upstream_timeout(limits: Limits) -> httpx.Timeout:
    return httpx.Timeout(
        connect=limits.upstream_connect_timeout,
        read=limits.upstream_read_timeout,
        write=limits.upstream_write_timeout,
        pool=limits.upstream_pool_timeout,
    )


class OpenAICompatBackend:
    kind = "openai_compat"
    slots = 1  # replies at once (Parley's own limit; the upstream may queue more)
    tools_unsupported: str | None = None  # an upstream that cannot call tools says so itself
    images_unsupported: str | None = None  # the same for images

    def __init__(
        self,
        upstream: UpstreamSettings,
        limits: Limits,
        *,
        extra_body: dict[str, Any] | None = None,
        keep_alive: bool = True,
    ) -> None:
        """`extra_body`: fields added to every request (the local engine's own options)."""
        self.name = upstream.model
        self.base_url = upstream.base_url.rstrip("/") + "/"
        # OpenAI's own API answers a final assistant message with a new reply, not its end.
        hosted = urllib.parse.urlsplit(self.base_url).hostname == "api.openai.com"
        self.continuation: Continued = "fallback" if hosted else "prefix"
        self._extra_body = extra_body or {}
        self._context = upstream.context
        self._relay_pause = limits.relay_pause
        timeout = upstream_timeout(limits)
        self._client = upstream_client(
            upstream.base_url, upstream.api_key, timeout, keep_alive=keep_alive
        )
        self._client.headers["Accept"] = "text/event-stream"
        self._client.headers["Accept-Encoding"] = "identity"
        question = ContextQuestion(self._client, self.base_url, self.name, limits.models)
        self._asker = ContextAsker(question, limits.models.upstream_context_retry)

    # Checked, not assumed: "unloaded" until checked, "loading" while a check runs, then
    # "ready" or "error" (unreachable, key refused); every request's outcome updates it.
    _state: ModelState = "unloaded"
    _state_error: str | None = None
    _check: asyncio.Task[None] | None = None

    @property
    def state(self) -> ModelState:
        return self._state

    @property
    def state_error(self) -> str | None:
        return self._state_error

    def warm_up(self) -> None:
        """Check the upstream in the background (`GET models`, bounded): reachable, and
        does it take the key? Cheap, so every configured upstream is checked at start."""
        if self._check is None or self._check.done():
            self._state = "loading"
            self._check = asyncio.get_running_loop().create_task(self._check_reachable())
        if self._context is None:
            self._asker.start()  # its context, in the background too

    async def _check_reachable(self) -> None:
        try:
            await list_models(self._client)
        except BackendError as exc:
            self._set_state("error", str(exc))
        else:
            self._set_state("ready", None)

    def _set_state(self, state: ModelState, error: str | None) -> None:
        self._state, self._state_error = state, error

    async def admit(self, request: ChatRequest) -> None:
        """Nothing to check here: the upstream knows its own context and says so."""

    @property
    def context_length(self) -> int | None:
        """What the backend's settings say, else what the upstream said when asked (in the
        background: None until it answers, and when it does not say)."""
        return self._context if self._context is not None else self._asker.known()

    async def count_tokens(self, texts: list[str]) -> tuple[list[int], bool]:
        return [estimate_tokens(text) for text in texts], True

    async def aclose(self) -> None:
        if self._check is not None:
            self._check.cancel()
        self._asker.cancel()
        await self._client.aclose()

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [_wire_message(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.seed is not None:
            body["seed"] = request.seed
        if request.continue_final:
            # llama-server and Ollama go on from a final assistant message by themselves;
            # vLLM is told to (both fields are its own; the others ignore them).
            body["continue_final_message"] = True
            body["add_generation_prompt"] = False
        if request.stop:
            body["stop"] = request.stop
        if request.tools:
            body["tools"] = request.tools
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
        body.update(self._extra_body)
        return body

    async def _payload(self, request: ChatRequest) -> dict[str, Any]:
        """The request's body: as JSON by httpx, or, carrying images (megabytes of base64),
        encoded on a worker thread so the event loop serves the other replies meanwhile."""
        body = self._body(request)
        if not any(m.get("images") for m in request.messages):
            return {"json": body}
        encoded = await anyio.to_thread.run_sync(_json_bytes, body)
        return {"content": encoded, "headers": {"Content-Type": "application/json"}}

    @contextlib.asynccontextmanager
    async def _response(self, request: ChatRequest) -> AsyncIterator[httpx.Response]:
        """The upstream's response to the request. Tools Parley offered on its own that the
        upstream's model refuses (HTTP 400: many Ollama models have no tool support) are
        dropped: the request is sent again without them, and they are not offered again."""
        # Only a first step (no tool exchange in the history yet) can tell: a 400 later may
        # be about anything (a context overflow after a long result...).
        first_step = not any(m["role"] == "tool" or m.get("tool_calls") for m in request.messages)
        may_drop = request.tools and request.tools_optional and first_step
        async with self._client.stream(
            "POST", "chat/completions", **await self._payload(request)
        ) as response:
            if not (response.status_code == 400 and may_drop):
                yield response
                return
            refusal = await _describe_refusal(response)
            if "tool" not in refusal.lower():  # refused for another reason: say so
                raise BackendError(refusal)
        without = dataclasses.replace(request, tools=None, tools_optional=False)
        async with self._client.stream(
            "POST", "chat/completions", **await self._payload(without)
        ) as response:
            if response.status_code == 200:  # it was the tools: not offered again
                self.tools_unsupported = f"{self.name} cannot call tools ({refusal})"
            yield response

    async def stream(
        self, request: ChatRequest, signal: StopSignal
    ) -> AsyncGenerator[StreamEvent, None]:
        try:
            finish: FinishReason | None = None
            usage: Usage | None = None
            done = False
            joiner = TextJoiner()
            try:
                async with self._response(request) as response:
                    if response.status_code != 200:
                        raise BackendError(await _describe_refusal(response))
                    self._set_state("ready", None)
                    encoding = response.headers.get("content-encoding", "identity").lower()
                    if encoding not in ("", "identity"):
                        # Asked for identity: a compressed stream is refused, not inflated.
                        # A few hundred KB of gzip inflate to GBs and starved the whole
                        # server; a token stream gains nothing from compression.
                        raise BackendError(
                            f"the upstream sent a compressed stream ({encoding}); Parley "
                            "reads replies uncompressed"
                        )
                    batches = _sse_data(response, self._relay_pause)
                    async with contextlib.aclosing(batches):
                        async for batch in batches:
                            if signal.requested:
                                return
                            # The text of every event one read brought, as one delta: at a
                            # fast upstream's rate, a delta per token kept the server's
                            # thread (and so the window's GIL) busy per token.
                            said: list[str] = []
                            for data in batch:
                                if data == b"[DONE]":
                                    done = True
                                    break
                                chunk = parse_chunk(data)
                                text, reason, chunk_usage = read_chunk(chunk)
                                text = joiner.feed(text)
                                if text:
                                    said.append(text)
                                calls = tool_call_deltas(chunk)
                                if calls and said:  # in order: the text before the calls
                                    yield TextDelta("".join(said))
                                    said = []
                                for call in calls:
                                    yield call
                                finish = reason or finish
                                usage = chunk_usage or usage
                            if said:
                                yield TextDelta("".join(said))
                            if done:
                                break
            except httpx.HTTPError as exc:
                problem = describe_transport_error(exc, self.base_url)
                if isinstance(exc, httpx.ConnectError):
                    self._set_state("error", problem)
                raise BackendError(problem) from exc
            tail = joiner.flush()
            if tail:
                yield TextDelta(tail)
            if not done and finish is None:
                raise BackendError("the upstream ended the stream before finishing the reply")
            yield StreamEnd(finish or "stop", usage)
        finally:
            signal.confirm_stopped()


def _json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _wire_message(message: ChatMessage) -> dict[str, Any]:
    """A message as upstreams expect it: an assistant message that only calls tools has
    `content: null` (some upstreams refuse an empty string beside `tool_calls`)."""
    if message.get("tool_calls") and not message["content"]:
        return {**message, "content": None}
    images = message.get("images")
    if images is not None:
        wire: dict[str, Any] = {k: v for k, v in message.items() if k != "images"}
        urls = [image["url"] for image in images if "url" in image]
        if urls:  # OpenAI's parts: the text, then each image
            wire["content"] = [
                *([{"type": "text", "text": message["content"]}] if message["content"] else []),
                *({"type": "image_url", "image_url": {"url": url}} for url in urls),
            ]
        return wire
    return dict(message)


async def _sse_data(
    response: httpx.Response, pause: float | None = None
) -> AsyncGenerator[list[bytes], None]:
    """The data of each event of an event stream (server/types/sse.py), the events of each
    read together (a list, never empty). `pause`: input that piles up is read in bursts with
    pauses this long between them (Limits.relay_pause; None: as fast as it comes)."""
    splitter = EventSplitter()
    # Raw: a compressed stream was refused before this (identity only), so there is
    # nothing to decode, and the decoder's layer cost a generator step per piece.
    pieces = response.aiter_raw()
    duty = DutyCycle(pause) if pause is not None else None
    while True:
        if duty is not None:
            duty.asking()
        try:
            received = await anext(pieces)
        except StopAsyncIteration:
            break
        if duty is not None:
            await duty.got()
        found = splitter.feed(received)
        if len(splitter.pending) > ModelLimits.upstream_line_bytes:
            raise BackendError(
                f"the upstream sent an event longer than {ModelLimits.upstream_line_bytes} bytes"
            )
        if found:
            yield found
    last = splitter.end()
    if last:
        yield last


async def _describe_refusal(response: httpx.Response) -> str:
    raw = b""
    async for piece in response.aiter_bytes():
        raw += piece
        if len(raw) >= ModelLimits.error_body_bytes:
            break
    body = raw[: ModelLimits.error_body_bytes].decode("utf-8", "replace")
    message = body
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            message = str(parsed["error"].get("message", body))
    except ValueError:
        pass
    message = valid_unicode(message.strip())
    return f"the upstream refused the request (HTTP {response.status_code}): {message}"
