"""The lines of an event stream as the SSE spec ends them: at LF, CRLF or CR only.

httpx's `aiter_lines()` splits like `str.splitlines`, which also ends a line at U+0085, U+2028,
U+2029 and a few control characters. Any of those inside a chunk's JSON text (a model's words, a
tool's result) would cut the chunk in two, neither half JSON. Splitting the bytes before decoding
keeps a chunk whole whatever characters it carries."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx


async def event_lines(response: httpx.Response) -> AsyncIterator[str]:
    """Each line of the response's body, without its ending, decoded as UTF-8."""
    pending = b""
    async for piece in response.aiter_bytes():
        pending += piece
        # A CR that ends a piece may be the first half of a CRLF: it waits for the next piece.
        held = b"\r" if pending.endswith(b"\r") else b""
        text = pending[: len(pending) - len(held)]
        *lines, rest = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        pending = rest + held
        for line in lines:
            yield line.decode("utf-8", errors="replace")
    if pending.rstrip(b"\r"):
        yield pending.rstrip(b"\r").decode("utf-8", errors="replace")
