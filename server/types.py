"""The wire: shapes of the JSON the server stores and serves, one definition for both sides.

The desktop imports this module (and only a few others, see tests/test_layering.py), so it
holds nothing but types: no imports beyond `typing`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

Role = Literal["system", "user", "assistant"]
Status = Literal["streaming", "completed", "interrupted", "error"]
EndedBy = Literal["client_hangup", "shutdown", "error", "crash"]
FinishReason = Literal["stop", "length"]
ModelState = Literal["unloaded", "loading", "ready", "error"]

# Token counts as reported by a backend (OpenAI's names: prompt_tokens, completion_tokens,
# total_tokens) plus Parley's own: completion_tokens_estimated (1 when counted by deltas),
# context_dropped_messages, ttft_ms and tokens_per_s.
Usage = dict[str, int | float]


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


class ConversationListJSON(TypedDict):
    conversations: list[ConversationJSON]


class ModelStatusJSON(TypedDict):
    name: str
    kind: str
    state: ModelState
    error: str | None
    in_use: bool  # slots_busy > 0
    slots: int  # replies it serves at once
    slots_busy: int
    queue_length: int  # replies waiting for a slot


class GGUFJSON(TypedDict):
    """What a local model's GGUF file says about itself (read from its header)."""

    path: str
    size_bytes: int
    quantization: str | None
    context_length: int | None  # what the model was trained for; Parley uses its own n_ctx
    architecture: str | None


class LocalModelSettingsJSON(TypedDict):
    """A local model's own settings (`PATCH /api/models/{name}`)."""

    n_ctx: int  # each conversation's context, in tokens
    n_threads: int  # generation threads
    n_gpu_layers: int  # layers offloaded to a GPU (-1: all; needs a GPU build)


class ModelJSON(ModelStatusJSON):
    """One model in `GET /api/models`."""

    default: bool
    removable: bool  # added with POST /api/models/local (not the bundled or a flag's model)
    gguf: NotRequired[GGUFJSON]
    settings: NotRequired[LocalModelSettingsJSON]


class BackendCheckJSON(TypedDict):
    """`POST /api/backends/check`: is an upstream there, and which models it lists."""

    reachable: bool
    models: NotRequired[list[str]]
    error: NotRequired[str]


class FoundServerJSON(TypedDict):
    """A local OpenAI-compatible server found running (`GET /api/backends/detect`)."""

    name: str  # "Ollama", "LM Studio"
    base_url: str
    models: list[str]


class StatusJSON(TypedDict):
    models: list[ModelStatusJSON]
    default_model: str | None
    active_turns: int


# -- a streamed reply: OpenAI `chat.completion.chunk`s, Parley's fields added --------------


class DeltaJSON(TypedDict, total=False):
    role: Literal["assistant"]
    content: str


class ChoiceJSON(TypedDict):
    index: int
    delta: DeltaJSON
    finish_reason: FinishReason | None


class OutcomeJSON(TypedDict):
    """What Parley saved, in the final chunk (`parley`) and a whole completion."""

    status: Status
    ended_by: EndedBy | None
    error: NotRequired[str]
    save_error: NotRequired[str]


class ErrorBodyJSON(TypedDict):
    """OpenAI's error object: `{"error": ErrorBodyJSON}` answers a failed request."""

    code: str
    message: str
    type: str
    param: str | None


class ChunkJSON(TypedDict):
    """One server-sent event of a reply.

    The first chunk of a conversation turn also carries `conversation_id`,
    `user_message_id` and `message_id`; the last one carries `usage` and `parley` (and
    `error` when the backend failed). Only the last one has `parley`.
    """

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChoiceJSON]
    conversation_id: NotRequired[str]
    user_message_id: NotRequired[str]
    message_id: NotRequired[str]
    usage: NotRequired[Usage | None]
    parley: NotRequired[OutcomeJSON]
    error: NotRequired[ErrorBodyJSON]
