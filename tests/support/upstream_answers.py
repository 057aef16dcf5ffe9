"""Scripted answers of the scripted upstream outside the chat: what `GET /v1/models`,
llama-server's `/props` or Ollama's `/api/show` say (issue 42: a backend asks its context).

`ScriptedUpstream.answers[path] = Answer.of({...})` answers that path; every request to a
path in `answers` is recorded in `ScriptedUpstream.asked`. A path not in `answers` is
answered as before.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

PIECE = 65_536


@dataclass
class Answer:
    body: bytes = b"{}"
    status: int = 200
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    # Seconds between bytes, sent for ever (the body again and again) until the client hangs
    # up: each read is quick, the answer never ends.
    drip: float | None = None
    sized: bool = True  # False: no Content-Length, the body in pieces of 64 KB

    @classmethod
    def of(cls, payload: Any, status: int = 200) -> Answer:
        return cls(json.dumps(payload).encode(), status)


@dataclass
class Asked:
    method: str
    path: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    hung_up_at: float | None = None
    finished: bool = False


async def serve_answer(answer: Answer, asked: Asked, receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"application/json"), *answer.headers]
    if answer.drip is None and answer.sized:
        headers.append((b"content-length", str(len(answer.body)).encode()))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    if answer.drip is None:
        pieces = [answer.body[i : i + PIECE] for i in range(0, len(answer.body), PIECE)]
        for piece in pieces if not answer.sized else []:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"" if not answer.sized else answer.body})
        asked.finished = True
        return
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            asked.hung_up_at = time.perf_counter()
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        index = 0
        while True:
            byte = answer.body[index % len(answer.body) : index % len(answer.body) + 1]
            await send({"type": "http.response.body", "body": byte, "more_body": True})
            index += 1
            await anyio.sleep(answer.drip)
