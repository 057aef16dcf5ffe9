"""OpenAI `chat.completion` objects and `text/event-stream` framing for a run's reply."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from server.errors import BadGatewayError
from server.storage.store import Ending
from server.types import (
    CitationPartJSON,
    FinishReason,
    ToolCallJSON,
    ToolPartJSON,
    Usage,
)
from server.types.chunks import (
    ApprovalJSON,
    ChunkJSON,
    CompactionJSON,
    DeltaJSON,
    OutcomeJSON,
    OverdueJSON,
    QuestionEventJSON,
)

DONE = b"data: [DONE]\n\n"


class CompletionMessageJSON(TypedDict):
    role: Literal["assistant"]
    content: str | None  # None when the reply is only tool calls (OpenAI's shape)
    tool_calls: NotRequired[list[ToolCallJSON]]


class CompletionChoiceJSON(TypedDict):
    index: int
    message: CompletionMessageJSON
    finish_reason: FinishReason | None


class CompletionJSON(TypedDict):
    """A whole non-streamed `chat.completion` (the OpenAI-compatible API only)."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[CompletionChoiceJSON]
    usage: Usage | None
    parley: OutcomeJSON


@dataclass(frozen=True)
class TurnIds:
    """What a conversation turn's first chunk tells: the rows written before generation."""

    conversation_id: str
    user_message_id: str
    message_id: str
    conversation_title: str


# Characters that end a line for `str.splitlines` (and so for many clients' line readers, httpx's
# `aiter_lines` among them) though not for SSE, and that JSON leaves unescaped. Escaped, a chunk
# stays one line for every reader; the JSON's value is the same.
_LINE_BREAKS = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def encode(payload: Mapping[str, object]) -> bytes:
    text = json.dumps(payload, ensure_ascii=False).translate(_LINE_BREAKS)
    return b"data: " + text.encode() + b"\n\n"


class ChunkWriter:
    """Builds the chunks (or the whole completion) of one reply."""

    def __init__(self, completion_id: str, model: str) -> None:
        self.completion_id = completion_id
        self.model = model
        self.created = int(time.time())

    def chunk(self, delta: DeltaJSON, finish_reason: FinishReason | None = None) -> ChunkJSON:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    def first(self, turn: TurnIds | None) -> ChunkJSON:
        """The first chunk, sent at once: the role, and a conversation turn's ids."""
        chunk = self.chunk({"role": "assistant", "content": ""})
        if turn is not None:
            chunk["conversation_id"] = turn.conversation_id
            chunk["user_message_id"] = turn.user_message_id
            chunk["message_id"] = turn.message_id
            chunk["conversation_title"] = turn.conversation_title
        return chunk

    def tool_calls(self, calls: list[ToolCallJSON]) -> ChunkJSON:
        """The tool calls a model call ended with, whole, in one `delta.tool_calls`."""
        return self.chunk(
            {
                "tool_calls": [
                    {"index": index, "id": c["id"], "type": "function", "function": c["function"]}
                    for index, c in enumerate(calls)
                ]
            }
        )

    def step(self, part: ToolPartJSON) -> ChunkJSON:
        """A tool step began or ended: no choices, the step under `parley`."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"step": part}
        return chunk

    def approval(self, approval: ApprovalJSON) -> ChunkJSON:
        """A tool call waits for the user's decision: no choices, it under `parley`."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"approval": approval}
        return chunk

    def question(self, question: QuestionEventJSON) -> ChunkJSON:
        """A tool's server asks the user: no choices, the question under `parley`."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"question": question}
        return chunk

    def overdue(self, overdue: OverdueJSON) -> ChunkJSON:
        """A call ran for its timeout: keep waiting or stop it? No choices, it under `parley`."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"overdue": overdue}
        return chunk

    def compaction(self, event: CompactionJSON) -> ChunkJSON:
        """Earlier messages are being summarised (how far), or were: no choices."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"compaction": event}
        return chunk

    def citation(self, part: CitationPartJSON) -> ChunkJSON:
        """The reply cited a source for the first time: no choices, it under `parley`."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"citation": part}
        return chunk

    def save_problem(self, problem: str | None) -> ChunkJSON:
        """The reply's writes fail (why), or succeed again (None): no choices."""
        chunk = self.chunk({})
        chunk["choices"] = []
        chunk["parley"] = {"save_problem": problem}
        return chunk

    def final(self, ending: Ending) -> ChunkJSON:
        """The last chunk: enough to show the reply's ending without asking the server again.

        `finish_reason` (when completed), `usage` exactly as saved (token counts, `ttft_ms`,
        `tokens_per_s`), `parley` (what was saved) and, when the backend failed, `error`.
        """
        completed = ending.status == "completed"
        chunk = self.chunk({}, ending.finish_reason if completed else None)
        chunk["usage"] = ending.usage
        chunk["parley"] = outcome(ending)
        if ending.error is not None:
            # OpenAI clients raise on a chunk that carries "error".
            chunk["error"] = BadGatewayError(ending.error).body()
        return chunk

    def completion(self, ending: Ending) -> CompletionJSON:
        """A whole non-streamed `chat.completion`."""
        message: CompletionMessageJSON = {"role": "assistant", "content": ending.content}
        if ending.tool_calls:
            message["tool_calls"] = ending.tool_calls
            message["content"] = ending.content or None
        return {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": ending.finish_reason}],
            "usage": ending.usage,
            "parley": outcome(ending),
        }


def outcome(ending: Ending) -> OutcomeJSON:
    """What Parley saved (`parley` in a final chunk or a whole completion)."""
    found: OutcomeJSON = {"status": ending.status, "ended_by": ending.ended_by}
    if ending.error is not None:
        found["error"] = ending.error
    if ending.save_error is not None:
        found["save_error"] = ending.save_error
    if ending.ended is not None:
        found["ended"] = ending.ended
    return found
