"""A server's questions during a call (MCP elicitation), carried to the user who made the
call: which call asks, and the SDK's question and answer in Parley's terms.

The SDK hands each question to one callback per client. Which call it belongs to depends on
the protocol: at 2026-07-28 the question is in the call's own result and the SDK asks it
inside the call's task (so a context variable the call set names the call); at 2025-11-25
the server sends it as a request of its own, which names no call, so it goes to the
server's oldest call still under way. A question with no call under way (or none whose
user can be asked) is answered "cancel".
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterator
from contextvars import ContextVar

import mcp_types
from mcp.client import ClientRequestContext

from server.agent.toolbox import Ask, Question

log = logging.getLogger(__name__)

_asking: ContextVar[Ask | None] = ContextVar("parley_mcp_asking", default=None)


class Askers:
    """Who asks the user one server's questions: its calls under way."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._calls: dict[int, Ask] = {}
        self._numbers = itertools.count()

    @contextlib.contextmanager
    def calling(self, ask: Ask | None) -> Iterator[None]:
        """Around one call (entered and left in the call's task)."""
        number = next(self._numbers)
        if ask is not None:
            self._calls[number] = ask
        token = _asking.set(ask)
        try:
            yield
        finally:
            _asking.reset(token)
            self._calls.pop(number, None)

    async def on_question(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The SDK's elicitation callback: the user's answer, or "cancel" with no one to ask."""
        ask = _asking.get() or next(iter(self._calls.values()), None)
        if ask is None:
            log.info("MCP server %r asked with no call under way: cancelled", self._server)
            return mcp_types.ElicitResult(action="cancel")
        answer = await ask(question(params))
        if answer.action != "accept" or answer.content is None:
            return mcp_types.ElicitResult(action=answer.action)
        return mcp_types.ElicitResult.model_validate(
            {"action": "accept", "content": answer.content}
        )


def question(params: mcp_types.ElicitRequestParams) -> Question:
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        return Question("url", params.message, url=params.url)
    return Question("form", params.message, schema=dict(params.requested_schema))
