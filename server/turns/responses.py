"""ASGI responses that follow a run, and hang up on it when their client goes away.

Plain ASGI responses rather than Starlette's StreamingResponse, so that the hang-up path is
ours and explicit: a watcher awaits `http.disconnect` the whole time (so a hang-up is noticed
at once even while nothing is being written, e.g. during a prefill or a stalled upstream)
and calls the synchronous `run.stop("client_hangup")`. No cleanup lives here: the run
settles itself on the server loop, outside this request's cancelled scope.
"""

from __future__ import annotations

import anyio
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from server.agent.feed import (
    ApprovalNeeded,
    CallOverdue,
    Cited,
    Compaction,
    QuestionAsked,
    SaveProblem,
    StepChanged,
    ToolCallsMade,
)
from server.errors import ApiError, BadGatewayError, UnavailableError
from server.http.error_response import ErrorResponse
from server.turns.completions import DONE, ChunkWriter, TurnIds, encode
from server.turns.run import Run

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class RunResponse(Response):
    def __init__(self, run: Run, writer: ChunkWriter) -> None:
        super().__init__()
        self.run = run
        self.writer = writer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_disconnect, receive, tg.cancel_scope)
                await self.respond(scope, receive, send)
                tg.cancel_scope.cancel()
        finally:
            # Synchronous, so no cancellation can skip it. A no-op once the run has ended.
            self.run.stop("client_hangup")

    async def _watch_disconnect(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
        scope.cancel()  # the `finally` above stops the run: one stop for every ending

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class RunEventStream(RunResponse):
    """The reply as it grows: OpenAI chunks as server-sent events, then `[DONE]`."""

    def __init__(
        self, run: Run, writer: ChunkWriter, turn: TurnIds | None = None, pace: float = 0.0
    ) -> None:
        super().__init__(run, writer)
        self.turn = turn
        self.pace = pace  # seconds: text at most this often (0: as it comes)

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        first = encode(self.writer.first(self.turn))
        await send({"type": "http.response.body", "body": first, "more_body": True})
        async for item in self.run.follow(self.pace):
            if isinstance(item, str):
                body = encode(self.writer.chunk({"content": item}))
            elif isinstance(item, ToolCallsMade):
                body = encode(self.writer.tool_calls(item.calls))
            elif isinstance(item, StepChanged):
                body = encode(self.writer.step(item.step))
            elif isinstance(item, ApprovalNeeded):
                body = encode(self.writer.approval(item.approval))
            elif isinstance(item, QuestionAsked):
                body = encode(self.writer.question(item.question))
            elif isinstance(item, CallOverdue):
                body = encode(self.writer.overdue(item.overdue))
            elif isinstance(item, Compaction):
                body = encode(self.writer.compaction(item.json()))
            elif isinstance(item, Cited):
                body = encode(self.writer.citation(item.citation))
            elif isinstance(item, SaveProblem):
                body = encode(self.writer.save_problem(item.problem))
            else:
                body = encode(self.writer.final(item)) + DONE
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class RunCompletion(RunResponse):
    """The whole reply as one `chat.completion` JSON, once the run has ended."""

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.run.wait_done()
        ending = self.run.ending
        if ending is None:  # wait_done returns only after the settle set it
            return
        error: ApiError | None = None
        if ending.status == "error":
            error = BadGatewayError(ending.error or "the model failed")
        elif ending.status == "interrupted":
            error = UnavailableError(
                f"the reply was interrupted ({ending.ended_by})", code="interrupted"
            )
        response = ErrorResponse(error) if error else JSONResponse(self.writer.completion(ending))
        await response(scope, receive, send)
