"""An OpenAI-compatible upstream that attacks its client: for now, a gzip bomb (a small
compressed body that inflates to tens of MB of SSE lines). More modes belong here (issue 19)."""

from __future__ import annotations

import gzip
from typing import Any

from tests.support.upstream import ServedOnLoopback

INFLATED_BYTES = 50_000_000


class GzipBombUpstream(ServedOnLoopback):
    """Answers every chat completion with `Content-Encoding: gzip` and a bomb body."""

    def __init__(self) -> None:
        self.body = gzip.compress(b"data: {}\n\n" * (INFLATED_BYTES // 10), compresslevel=9)
        self.requests = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"content-encoding", b"gzip"),
            (b"content-length", str(len(self.body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


class RawUpstream(ServedOnLoopback):
    """Answers every chat completion with exactly these bytes, one body message each (so a
    line ending can be split across network reads)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.requests = 0  # chat completions asked for

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"].endswith("/chat/completions"):
            self.requests += 1
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in self.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
