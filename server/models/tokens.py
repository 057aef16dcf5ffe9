"""Token counts by the local engine's own tokenizer (`/tokenize`), remembered by a hash of
each text, so a conversation's history is counted once, not at every turn.

A long chat asks for thousands of counts at once: at most `AT_ONCE` requests are in flight
(10,000 at once spent minutes in the HTTP client's pool, which matches each waiting request
against each connection), and the memory holds a chat's worth of counts (`CACHE`: with
fewer than a chat's messages, every count of it missed them all again)."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

import httpx

from server.errors import BackendError

CACHE = 65_536  # texts whose count is remembered (~100 bytes each)
AT_ONCE = 8  # requests to the engine in flight


class TokenCounts:
    def __init__(self) -> None:
        self._counts: OrderedDict[bytes, int] = OrderedDict()

    async def count(self, engine: httpx.AsyncClient, texts: list[str]) -> dict[str, int]:
        """Each text's tokens (BackendError when the engine cannot say)."""
        found: dict[str, int] = {}
        missing: dict[bytes, str] = {}
        for text in texts:
            digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
            if digest in self._counts:
                self._counts.move_to_end(digest)
                found[text] = self._counts[digest]
            else:
                missing[digest] = text
        if missing:
            turns = asyncio.Semaphore(AT_ONCE)

            async def one(text: str) -> int:
                async with turns:
                    return await _tokenize(engine, text)

            counted = await asyncio.gather(*(one(t) for t in missing.values()))
            for (digest, text), count in zip(missing.items(), counted, strict=True):
                found[text] = self._counts[digest] = count
            while len(self._counts) > CACHE:
                self._counts.popitem(last=False)
        return found


async def _tokenize(engine: httpx.AsyncClient, text: str) -> int:
    try:
        response = await engine.post("/tokenize", json={"content": text, "add_special": False})
        tokens = response.json()["tokens"]
    except (httpx.HTTPError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        # RuntimeError: the client was closed under us (the engine restarted or removed).
        raise BackendError(f"the local engine could not count tokens: {exc!r}") from exc
    return len(tokens)
