"""Shapes of the JSON the server stores and serves."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Role = Literal["system", "user", "assistant"]
Status = Literal["streaming", "completed", "interrupted", "error"]
EndedBy = Literal["client_hangup", "shutdown", "error", "crash"]
FinishReason = Literal["stop", "length"]

# Usage as reported by a backend (OpenAI's names), plus Parley's timings.
Usage = dict[str, Any]


class ChatMessage(TypedDict):
    role: Role
    content: str


class MessageJSON(TypedDict):
    id: str
    conversation_id: str
    role: Role
    content: str
    status: Status
    ended_by: EndedBy | None
    error: str | None
    model: str | None
    created_at: float
    completed_at: float | None
    usage: Usage | None


class SearchMatch(TypedDict):
    message_id: str | None
    snippet: str


class ConversationJSON(TypedDict):
    id: str
    title: str
    model: str | None
    system: str | None
    created_at: float
    updated_at: float
    messages: NotRequired[list[MessageJSON]]
    match: NotRequired[SearchMatch]
