"""The events of a response's event stream, as the window reads them: the data of each one,
split by the server's own splitter (server/types/sse.py), which ends lines at LF, CRLF or CR
only. httpx's `aiter_lines()` splits like `str.splitlines`, which also ends a line at U+0085,
U+2028, U+2029 and a few control characters: any of those inside a chunk's JSON text (a
model's words, a tool's result) would cut the chunk in two, neither half JSON."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from server.types.sse import EventSplitter


async def event_data(response: httpx.Response) -> AsyncIterator[str]:
    """The data of each event of the response's body, decoded as UTF-8."""
    splitter = EventSplitter()
    async for piece in response.aiter_bytes():
        for data in splitter.feed(piece):
            yield data.decode("utf-8", errors="replace")
    for data in splitter.end():
        yield data.decode("utf-8", errors="replace")
