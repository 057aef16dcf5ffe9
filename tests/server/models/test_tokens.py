"""Counting a long chat's tokens with the engine's tokenizer: a bounded number of requests in
flight, and each text counted once. The engine is a real HTTP server on loopback that
tokenizes by words and records how many requests it holds at once."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server.models.tokens import AT_ONCE, TokenCounts


class Tokenizer:
    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.asked = 0

    async def tokenize(self, request: Request) -> JSONResponse:
        self.now += 1
        self.asked += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0)  # let others in: what concurrency there is shows
            body = await request.json()
            return JSONResponse({"tokens": list(range(len(body["content"].split())))})
        finally:
            self.now -= 1


async def counted_twice(texts: list[str]) -> tuple[Tokenizer, dict[str, int], int, dict[str, int]]:
    """Count `texts` twice against a real loopback tokenizer: what it saw, and the counts."""
    tokenizer = Tokenizer()
    app = Starlette(routes=[Route("/tokenize", tokenizer.tokenize, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)  # polling a fact: the server listens
        port = server.servers[0].sockets[0].getsockname()[1]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            counts = TokenCounts()
            first = await counts.count(client, texts)
            asked = tokenizer.asked
            second = await counts.count(client, texts)
    finally:
        server.should_exit = True
        await serving
    return tokenizer, first, asked, second


@pytest.mark.timeout(180)
def test_a_long_chat_is_counted_a_few_requests_at_a_time_and_once() -> None:
    texts = [f"message {n} of a long chat" for n in range(6_000)]
    tokenizer, first, asked, second = asyncio.run(counted_twice(texts))
    assert first == second == {text: 6 for text in texts}
    assert asked == 6_000 and tokenizer.most <= AT_ONCE  # was all 6,000 at once
    assert tokenizer.asked == 6_000  # none asked again: the cache held only 4,096
