"""OpenAI `chat.completion` objects and `text/event-stream` framing for a run's reply."""

from __future__ import annotations

import json
import time
from typing import Any

from server.store import Ending

DONE = b"data: [DONE]\n\n"


def encode(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


class ChunkWriter:
    """Builds the chunks (or the whole completion) of one reply."""

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
        """The last chunk: finish reason, usage, and what Parley saved (`parley`)."""
        extra: dict[str, Any] = {
            "usage": ending.usage,
            "parley": parley_outcome(ending, save_error),
        }
        if ending.error is not None:
            # OpenAI clients raise on a chunk that carries "error".
            extra["error"] = backend_error(ending.error)
        return self.chunk({}, finish_reason if ending.status == "completed" else None, **extra)

    def completion(self, ending: Ending, finish_reason: str | None) -> dict[str, Any]:
        """A whole non-streamed `chat.completion`."""
        return {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": ending.content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": ending.usage,
            "parley": parley_outcome(ending, None),
        }


def parley_outcome(ending: Ending, save_error: str | None) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": ending.status, "ended_by": ending.ended_by}
    if ending.error is not None:
        outcome["error"] = ending.error
    if save_error is not None:
        outcome["save_error"] = save_error
    return outcome


def backend_error(message: str) -> dict[str, Any]:
    return {"code": "backend_error", "message": message, "type": "server_error", "param": None}
