"""Fitting a conversation into a model's context window: drop the oldest turns, keep the system."""

from __future__ import annotations

import json
from collections.abc import Callable

from server.errors import PromptTooLongError
from server.types import ChatMessage

# ChatML wraps each message as "<|im_start|>role\n...<|im_end|>\n".
MESSAGE_OVERHEAD = 6
# What an image costs an upstream's prompt, estimated (OpenAI: 765 tokens for a 1024x1024
# image in high detail; others differ): the context meter counts it, the upstream decides.
IMAGE_TOKENS = 765
# Room kept for the reply when a request sets no max_tokens; and for the count's own error.
DEFAULT_REPLY_RESERVE = 512
SAFETY_MARGIN = 32


def message_text(message: ChatMessage) -> str:
    """A message as its tokens are counted: its text, then its tool calls as JSON."""
    calls = message.get("tool_calls")
    return message["content"] + (json.dumps(calls) if calls else "")


def estimate_tokens(text: str) -> int:
    """A count without the model's tokenizer, on the high side (3 characters a token: English
    is ~4, code and other languages fewer), so what it says fits does."""
    return -(-len(text) // 3)


def prompt_budget(context: int, max_tokens: int | None) -> int:
    """The prompt's room in a context of `context` tokens, with room kept for the reply."""
    reserve = (
        DEFAULT_REPLY_RESERVE if max_tokens is None else min(DEFAULT_REPLY_RESERVE, max_tokens)
    )
    return context - reserve - SAFETY_MARGIN


def fit_to_context(
    messages: list[ChatMessage], count_tokens: Callable[[str], int], budget: int
) -> tuple[list[ChatMessage], int, int]:
    """(the messages that fit in `budget` tokens, how many were dropped, their token count).

    A leading system message is always kept, and so is the last message. Older messages go
    first; a reply left at the front without its question goes with it. Raises
    PromptTooLongError if even the system message and the last message do not fit.
    """
    head = messages[:1] if messages and messages[0]["role"] == "system" else []
    rest = messages[len(head) :]

    def cost(message: ChatMessage) -> int:
        return count_tokens(message_text(message)) + MESSAGE_OVERHEAD

    costs = [cost(m) for m in rest]
    total = sum(cost(m) for m in head) + sum(costs)
    dropped = 0
    while total > budget and len(rest) > 1:
        total -= costs.pop(0)
        rest.pop(0)
        dropped += 1
        # A reply (and the tool results it asked for) left at the front without its
        # question goes with it.
        while len(rest) > 1 and rest[0]["role"] in ("assistant", "tool"):
            total -= costs.pop(0)
            rest.pop(0)
            dropped += 1
    if total > budget:
        raise PromptTooLongError(
            f"the message is too long for the model's context: {total} tokens, and at most "
            f"{budget} fit with room for a reply"
        )
    return head + rest, dropped, total


# How far back a chat's messages are counted with the tokenizer, in contexts' worth of
# estimated tokens: past that, an exact count changes nothing the user can act on.
COUNTED_CONTEXTS = 2


def counted_from(texts: list[str], context: int | None) -> int:
    """The index of the oldest of `texts` (a chat's history, oldest first) worth counting
    with the tokenizer: the newest ones whose estimate stays within COUNTED_CONTEXTS
    contexts; older ones are estimated. All of them (0) when the context is not known.

    A 10,000-message chat's meter asked the engine for 10,000 counts on its first opening,
    each a request, while a prompt holds a few dozen of them."""
    if context is None:
        return 0
    room = COUNTED_CONTEXTS * context
    total = 0
    for at in range(len(texts) - 1, -1, -1):
        total += estimate_tokens(texts[at]) + MESSAGE_OVERHEAD
        if total > room:
            return at + 1
    return 0
