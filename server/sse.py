"""A run's events as a `text/event-stream` of OpenAI `chat.completion.chunk` objects.

`RunEventStream` is a plain ASGI response rather than Starlette's StreamingResponse so that
the hang-up path is ours and explicit: a watcher awaits `http.disconnect` the whole time
(so a hang-up is noticed at once even while nothing is being written) and calls the
synchronous `run.stop("client_hangup")`. No cleanup lives in the response: the run settles
itself on the server loop, outside this request's cancelled scope.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from server.store import Ending
from server.turns import Run

log = logging.getLogger(__name__)

HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
DONE = b"data: [DONE]\n\n"


def encode(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


class ChunkWriter:
    """Builds the chunks of one completion."""

    def __init__(self, completion_id: str, model: str) -> None:
        self.completion_id = completion_id
        self.model = model
        self.created = int(time.time())

    def chunk(
        self, delta: dict[str, str], finish_reason: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }

    def final(
        self, ending: Ending, finish_reason: str | None, save_error: str | None = None
    ) -> dict[str, Any]:
        parley: dict[str, Any] = {"status": ending.status, "ended_by": ending.ended_by}
        if save_error is not None:
            parley["save_error"] = save_error
        extra: dict[str, Any] = {"usage": ending.usage, "parley": parley}
        if ending.error is not None:
            parley["error"] = ending.error
            extra["error"] = {
                "code": "backend_error",
                "message": ending.error,
                "type": "server_error",
            }
        return self.chunk({}, finish_reason if ending.status == "completed" else None, **extra)


class RunEventStream(Response):
    """ASGI response that follows one run and hangs up on it when the client goes away."""

    def __init__(self, run: Run, writer: ChunkWriter, first_extra: dict[str, Any]) -> None:
        super().__init__(media_type="text/event-stream")
        self.run = run
        self.writer = writer
        self.first_extra = first_extra

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_disconnect, receive, tg.cancel_scope)
                await self._stream(send)
                tg.cancel_scope.cancel()
        except OSError:
            pass  # the socket went away mid-write: the same hang-up
        finally:
            # Synchronous, so no cancellation can skip it. A no-op once the run has ended.
            self.run.stop("client_hangup")

    async def _watch_disconnect(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
        self.run.stop("client_hangup")  # a no-op once the run has ended
        scope.cancel()

    async def _stream(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        first = self.writer.chunk({"role": "assistant", "content": ""}, **self.first_extra)
        await send({"type": "http.response.body", "body": encode(first), "more_body": True})
        async for item in self.run.follow():
            if isinstance(item, str):
                body = encode(self.writer.chunk({"content": item}))
            else:
                final = self.writer.final(item, self.run.finish_reason, self.run.save_error)
                body = encode(final) + DONE
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
