"""A reply being streamed: the server's `chat.completion.chunk` events read one by one and
turned into the window's reply events (desktop/client/events.py). Stop is a hang-up:
`ReplyStream.aclose()` closes the response before its body ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import cast

import httpx

from desktop.client.answers import (
    APPROVAL_KEYS,
    CITATION_KEYS,
    OVERDUE_KEYS,
    STEP_KEYS,
    SUMMARY_KEYS,
    error_from,
    shaped,
)
from desktop.client.event_stream import event_data
from desktop.client.events import (
    ReplyApproval,
    ReplyCitation,
    ReplyCompaction,
    ReplyEnd,
    ReplyEvent,
    ReplyOverdue,
    ReplyQuestion,
    ReplySaveProblem,
    ReplyStep,
    ReplyText,
)
from desktop.client.questions import question_event
from desktop.errors import ClientError
from server.types import CitationPartJSON, ToolPartJSON
from server.types.chunks import (
    ApprovalJSON,
    ChunkJSON,
    CompactionJSON,
    OutcomeJSON,
    OverdueJSON,
)

YIELD_EVERY_EVENTS = 32


class ReplyStream:
    """A reply being streamed. Iterate `events()`; `aclose()` hangs up (that is Stop)."""

    def __init__(self, first: ChunkJSON, response: httpx.Response, events: AsyncIterator[str]):
        self.conversation_id = _field(first, "conversation_id")
        self.user_message_id = _field(first, "user_message_id")
        self.message_id = _field(first, "message_id")
        self.title = str(first.get("conversation_title") or "")  # the chat's, now
        self.model = first["model"]
        self.closed = False
        self._response = response
        self._events = events

    async def events(self) -> AsyncIterator[ReplyEvent]:
        """Text as it comes, then one ReplyEnd; nothing more after a hang-up."""
        try:
            count = 0
            async for data in self._events:
                count += 1
                if count % YIELD_EVERY_EVENTS == 0:
                    # Events already buffered come without a suspension: on the GUI's loop a
                    # fast burst would otherwise hold it for tens of milliseconds.
                    await asyncio.sleep(0)
                if data == "[DONE]":
                    return
                chunk = parse_chunk(data)
                outcome = chunk.get("parley")
                if outcome is not None and "status" in outcome:
                    yield ReplyEnd.from_final(chunk, cast(OutcomeJSON, outcome))
                elif outcome is not None and "step" in outcome:
                    yield ReplyStep(shaped(ToolPartJSON, STEP_KEYS, outcome["step"]))
                elif outcome is not None and "approval" in outcome:
                    yield ReplyApproval(shaped(ApprovalJSON, APPROVAL_KEYS, outcome["approval"]))
                elif outcome is not None and "overdue" in outcome:
                    yield ReplyOverdue(shaped(OverdueJSON, OVERDUE_KEYS, outcome["overdue"]))
                elif outcome is not None and "question" in outcome:
                    yield ReplyQuestion(question_event(outcome["question"]))
                elif outcome is not None and "compaction" in outcome:
                    yield ReplyCompaction(compaction(outcome["compaction"]))
                elif outcome is not None and "save_problem" in outcome:
                    problem = outcome["save_problem"]
                    yield ReplySaveProblem(problem if isinstance(problem, str) else None)
                elif outcome is not None and "citation" in outcome:
                    cited = shaped(CitationPartJSON, CITATION_KEYS, outcome["citation"])
                    yield ReplyCitation(cited)
                elif outcome is not None:
                    continue  # an event of a newer server: nothing to show
                elif chunk["choices"] and (text := chunk["choices"][0]["delta"].get("content")):
                    yield ReplyText(text)
        except httpx.HTTPError as exc:
            if not self.closed:
                raise ClientError(f"the connection to the server broke: {exc}") from exc
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Hang up. The server settles the reply (saved, marked stopped) on its own."""
        if not self.closed:
            self.closed = True
            await self._response.aclose()


def parse_chunk(data: str) -> ChunkJSON:
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise ClientError("the server sent a reply event that is not JSON") from exc
    chunk = shaped(ChunkJSON, ("model", "choices"), value)
    outcome = chunk.get("parley")
    if outcome is not None and "status" in outcome:
        shaped(dict, ("status", "ended_by"), outcome)
    return chunk


def compaction(value: object) -> CompactionJSON:
    """A `parley.compaction` event, checked (its summary too, when it has one)."""
    event = shaped(CompactionJSON, ("state",), value)
    if "summary" in event:
        shaped(dict, SUMMARY_KEYS, event["summary"])
    for key in ("round", "rounds", "tokens"):  # how far it is: only whole numbers are said
        number = event.get(key)
        if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
            del event[key]  # type: ignore[misc]
    return event


def _field(chunk: ChunkJSON, key: str) -> str:
    value = chunk.get(key)
    if not isinstance(value, str):
        raise ClientError(f"the server's first reply event has no {key}")
    return value


async def first_chunk(events: AsyncIterator[str]) -> ChunkJSON:
    async for data in events:
        return parse_chunk(data)
    raise ClientError("the server ended the reply before it began")


async def open_stream(
    http: httpx.AsyncClient, path: str, body: Mapping[str, object]
) -> tuple[ChunkJSON, httpx.Response, AsyncIterator[str]]:
    """POST a request the server answers with a stream (a turn, "Compact now"); return once
    its first chunk came: that chunk, the response (closing it is the hang-up) and the data
    of its events.
    ClientError when it cannot begin."""
    request = http.build_request("POST", path, json=body)
    try:
        response = await http.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach Parley's server: {exc}") from exc
    if response.status_code >= 400:
        raw = await response.aread()
        await response.aclose()
        raise error_from(response.status_code, raw)
    events = event_data(response)
    try:
        return await first_chunk(events), response, events
    except BaseException:
        await response.aclose()
        raise
