"""What a built prompt costs of the model's context, counted one way: the turn's compaction
(server/agent/compaction.py) and the context meter (server/routes/context.py) both count with
this, what server/agent/prompt.py builds.

A message costs its text as the backend counts it (its tool calls as JSON with it), its chat
template's wrapping, and each image it carries (estimated: the upstream decides); the tools'
definitions cost their JSON. Messages older than any prompt could hold are estimated rather
than counted (server/models/context.py: an exact count of them changes nothing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from server.models.base import ChatBackend
from server.models.context import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    counted_from,
    estimate_tokens,
    message_text,
)
from server.types import ChatMessage


@dataclass(frozen=True)
class Cost:
    messages: list[int]  # each message's, in order
    tools: int  # the tools' definitions
    images: int  # images among the messages
    estimated: bool  # some of it not counted by the model's tokenizer

    @property
    def used(self) -> int:
        return sum(self.messages) + self.tools


async def count(
    backend: ChatBackend,
    messages: list[ChatMessage],
    tools: list[dict[str, object]],
    *,
    extra: list[str] | None = None,
) -> tuple[Cost, list[int]]:
    """The cost of `messages` and `tools` given to `backend`'s model, and the counts of the
    `extra` texts (parts of them a caller shows on their own), counted in the same call."""
    texts = [message_text(message) for message in messages]
    first = 1 if messages and messages[0]["role"] == "system" else 0  # always counted
    start = first + counted_from(texts[first:], backend.context_length)
    asked = [*texts[:first], *texts[start:], *(extra or [])]
    if tools:
        asked.append(json.dumps(tools))
    exact, estimated = await backend.count_tokens(asked)
    tools_cost = exact.pop() if tools else 0
    extras = exact[len(exact) - len(extra or []) :]
    exact = exact[: len(exact) - len(extra or [])]
    older = [estimate_tokens(text) for text in texts[first:start]]
    counts = [*exact[:first], *older, *exact[first:]]
    per_image = IMAGE_TOKENS if backend.images_unsupported is None else 0
    images = [len(message.get("images", [])) for message in messages]
    costs = [c + MESSAGE_OVERHEAD + n * per_image for c, n in zip(counts, images, strict=True)]
    cost = Cost(costs, tools_cost, sum(images), estimated or bool(older))
    return cost, extras
