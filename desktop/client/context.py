"""The model's view of a chat for the window: its context meter, the summaries
compaction wrote (edit, undo), "Compact now" as a stream, and which MCP servers' tools the
chat offers. Composed into ParleyClient as `client.context`; calls go through its one HTTP
client. Stopping "Compact now" is a hang-up, as for a reply: `CompactionStream.aclose()`;
the server then saves nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import cast
from urllib.parse import urlencode

import httpx

from desktop.client.answers import CONTEXT_KEYS, SUMMARY_KEYS, shaped
from desktop.client.events import ReplyCompaction, ReplyEnd
from desktop.client.paths import segment
from desktop.client.stream import compaction, open_stream, parse_chunk
from desktop.errors import ClientError
from server.types import ContextJSON, SummaryJSON
from server.types.chunks import OutcomeJSON

Call = Callable[[str, str, object], Awaitable[object]]

CompactionEvent = ReplyCompaction | ReplyEnd


class CompactionStream:
    """ "Compact now" as it runs: iterate `events()` (compaction states, then one ReplyEnd);
    `aclose()` hangs up (Stop: nothing is saved)."""

    def __init__(self, conversation_id: str, response: httpx.Response, events: AsyncIterator[str]):
        self.conversation_id = conversation_id
        self.closed = False
        self._response = response
        self._events = events

    async def events(self) -> AsyncIterator[CompactionEvent]:
        try:
            async for data in self._events:
                if data == "[DONE]":
                    return
                chunk = parse_chunk(data)
                outcome = chunk.get("parley")
                if outcome is not None and "status" in outcome:
                    yield ReplyEnd.from_final(chunk, cast(OutcomeJSON, outcome))
                elif outcome is not None and "compaction" in outcome:
                    yield ReplyCompaction(compaction(outcome["compaction"]))
        except httpx.HTTPError as exc:
            if not self.closed:
                raise ClientError(f"the connection to the server broke: {exc}") from exc
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await self._response.aclose()


class ContextApi:
    def __init__(self, call: Call, http: httpx.AsyncClient) -> None:
        self._call = call
        self._http = http

    async def meter(self, conversation_id: str, model: str | None = None) -> ContextJSON:
        """What the chat's next turn would give `model` (None: the chat's), in tokens."""
        path = f"/api/conversations/{segment(conversation_id)}/context"
        if model:
            path += "?" + urlencode({"model": model})
        return shaped(ContextJSON, CONTEXT_KEYS, await self._call("GET", path, None))

    async def edit_summary(
        self, conversation_id: str, summary_id: str, content: str
    ) -> SummaryJSON:
        """The summary in the user's words (its `model` null from now on)."""
        path = _summary_path(conversation_id, summary_id)
        answer = await self._call("PATCH", path, {"content": content})
        return shaped(SummaryJSON, SUMMARY_KEYS, answer)

    async def undo_summary(self, conversation_id: str, summary_id: str) -> None:
        """The messages it stood for are in the model's view again (nothing was deleted)."""
        await self._call("DELETE", _summary_path(conversation_id, summary_id), None)

    async def set_tool_servers(self, conversation_id: str, names: list[str] | None) -> None:
        """The MCP servers whose tools the chat offers (None: every one)."""
        path = f"/api/conversations/{segment(conversation_id)}"
        await self._call("PATCH", path, {"tool_servers": names})

    async def compact(self, conversation_id: str, model: str | None = None) -> CompactionStream:
        """Summarise the chat's earlier messages now (all but the last exchange); returns once
        it has begun. ClientError 409 while a reply of the chat streams."""
        path = f"/api/conversations/{segment(conversation_id)}/compact"
        if model:
            path += "?" + urlencode({"model": model})
        _, response, events = await open_stream(self._http, path, {})
        return CompactionStream(conversation_id, response, events)


def _summary_path(conversation_id: str, summary_id: str) -> str:
    return f"/api/conversations/{segment(conversation_id)}/summaries/{segment(summary_id)}"
