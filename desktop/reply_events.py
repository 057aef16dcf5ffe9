"""What a reply's stream brings, as the window sees it: text, tool steps, calls awaiting the
user's approval, citations, and one ending (how the server saved the reply). Plain values, no
HTTP: desktop/client/ makes them from the server's events."""

from __future__ import annotations

from dataclasses import dataclass

from server.types import (
    CitationPartJSON,
    EndedBy,
    FinishReason,
    MessageJSON,
    PartJSON,
    Status,
    ToolPartJSON,
    Usage,
)
from server.types.chunks import ApprovalJSON, ChunkJSON, OutcomeJSON


@dataclass(frozen=True)
class ReplyText:
    """More text of the reply."""

    text: str


@dataclass(frozen=True)
class ReplyEnd:
    """How a reply ended, as the server saved it: from the final chunk of its stream, or
    from the stored message (after a hang-up, when no final chunk came)."""

    status: Status
    ended_by: EndedBy | None = None
    error: str | None = None
    usage: Usage | None = None
    save_error: str | None = None
    # The whole saved text, when read from the store (it may hold a few characters the
    # view never received); None when the view received all of it.
    content: str | None = None
    # The saved parts, when read from the store and the reply has tool steps.
    parts: list[PartJSON] | None = None
    # Why a completed reply's model stopped ("length": cut at its token limit).
    finish_reason: FinishReason | None = None

    @classmethod
    def from_message(cls, message: MessageJSON) -> ReplyEnd:
        return cls(
            status=message["status"],
            ended_by=message["ended_by"],
            error=message["error"],
            usage=message["usage"],
            content=message["content"],
            parts=message["parts"] if has_steps(message.get("parts", [])) else None,
            finish_reason=message.get("finish_reason"),
        )

    @classmethod
    def from_final(cls, chunk: ChunkJSON, outcome: OutcomeJSON) -> ReplyEnd:
        return cls(
            status=outcome["status"],
            ended_by=outcome["ended_by"],
            error=outcome.get("error"),
            usage=chunk.get("usage"),
            save_error=outcome.get("save_error"),
            finish_reason=chunk["choices"][0]["finish_reason"] if chunk["choices"] else None,
        )


@dataclass(frozen=True)
class ReplyStep:
    """A tool step of the reply began or changed (the whole step as it is now)."""

    part: ToolPartJSON


@dataclass(frozen=True)
class ReplyApproval:
    """A tool call waits for the user's decision: the tool, its server and its whole
    arguments (answer with `ParleyClient.decide_tool_call`). Its step came just before, with
    status `awaiting_approval`; the step's next change says how it was decided."""

    approval: ApprovalJSON


@dataclass(frozen=True)
class ReplyCitation:
    """The reply cited a source as [n] for the first time."""

    part: CitationPartJSON


ReplyEvent = ReplyText | ReplyStep | ReplyApproval | ReplyCitation | ReplyEnd


def has_steps(parts: list[PartJSON]) -> bool:
    """The reply has more than text (tool steps, citations): it is drawn from its parts."""
    return any(part["type"] != "text" for part in parts)
