"""Where a run's turn is kept: a stored conversation's rows, or nothing (the stateless
OpenAI-compatible API). Opened before the model is leased, checkpointed while the reply
streams, finished once by the run's settle (server/turns.py)."""

from __future__ import annotations

import concurrent.futures
from typing import Any, Protocol

from server.agent.toolbox import ToolBox, ToolCallError, ToolOutcome, ToolTarget
from server.errors import NotFoundError
from server.library.tool import PromptDocuments
from server.models.base import ChatRequest
from server.store import Ending, OpenedTurn, Store, new_id
from server.types import CitationPartJSON, PartJSON


class TurnSink(Protocol):
    """Where a run's turn is kept: opened before the model is leased, checkpointed while
    the reply streams, finished once by the settle."""

    async def open(self) -> ChatRequest:
        """Write what must exist before any generation; return what the model must see.

        Raises ParleyError when the turn cannot begin; nothing was written then.
        """
        ...

    def toolbox(self) -> ToolBox | None:
        """The tools the run may call itself (once open); None: the client runs its own
        (`tools` in the request are passed to the model, its calls end the reply)."""
        ...

    @property
    def sources(self) -> tuple[CitationPartJSON, ...]:
        """Sources put into the prompt when it opened (the reply may cite them as [n])."""
        ...

    def checkpoint(
        self, text: str, parts: list[PartJSON] | None
    ) -> concurrent.futures.Future[object] | None:
        """Queue a write of the reply so far; the future (if any) completes when written."""
        ...

    async def finish(self, ending: Ending) -> None: ...


class ConversationTurn:
    """A turn of a stored conversation: the user message, and the reply in its own row."""

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        content: str,
        model: str,
        max_tokens: int | None = None,
        tools: ToolBox | None = None,
        documents: PromptDocuments | None = None,
    ) -> None:
        """`tools`: what the turn offers the model when the conversation allows tools;
        `documents`: passages for its prompt when the conversation uses the user's
        documents."""
        self._store = store
        self._tools = tools
        self._documents = documents
        self.sources: tuple[CitationPartJSON, ...] = ()
        self.conversation_id = conversation_id
        self._content = content
        self._model = model
        self._max_tokens = max_tokens
        # Known before the rows exist: the run is named after its reply from the start.
        self.user_message_id = new_id()
        self.message_id = new_id()
        self.opened: OpenedTurn | None = None

    async def open(self) -> ChatRequest:
        opened = await self._store.open_turn(
            self.conversation_id,
            self._content,
            self._model,
            user_message_id=self.user_message_id,
            message_id=self.message_id,
        )
        if opened is None:
            raise NotFoundError(f"no conversation with id {self.conversation_id!r}")
        self.opened = opened
        prompt = opened.prompt
        if opened.documents and self._documents is not None:
            found = await self._documents.message(self._content)
            if found is not None:
                text, self.sources = found
                at = 1 if prompt and prompt[0]["role"] == "system" else 0
                prompt = [*prompt[:at], {"role": "system", "content": text}, *prompt[at:]]
        return ChatRequest(messages=prompt, max_tokens=self._max_tokens)

    def toolbox(self) -> ToolBox | None:
        if self.opened is not None and self.opened.tools and self._tools is not None:
            return self._tools
        return NO_TOOLS

    def checkpoint(
        self, text: str, parts: list[PartJSON] | None
    ) -> concurrent.futures.Future[object] | None:
        return self._store.checkpoint(self.message_id, text, parts)

    async def finish(self, ending: Ending) -> None:
        if self.opened is not None:  # else no row was written, and there is nothing to end
            await self._store.finish(self.message_id, ending)


class StatelessTurn:
    """A stateless run (the OpenAI-compatible API): the client keeps the history."""

    sources: tuple[CitationPartJSON, ...] = ()

    def __init__(self, request: ChatRequest) -> None:
        self._request = request

    async def open(self) -> ChatRequest:
        return self._request

    def toolbox(self) -> ToolBox | None:
        return None

    def checkpoint(
        self, text: str, parts: list[PartJSON] | None
    ) -> concurrent.futures.Future[object] | None:
        return None

    async def finish(self, ending: Ending) -> None:
        pass


class _NoTools:
    """A conversation turn with no tools to offer."""

    def specs(self) -> list[dict[str, Any]]:
        return []

    def target(self, function: str) -> ToolTarget | None:
        return None

    async def call(
        self, function: str, arguments: dict[str, Any], time_limit: float
    ) -> ToolOutcome:
        raise ToolCallError(f"there is no tool named {function!r}")


NO_TOOLS: ToolBox = _NoTools()
