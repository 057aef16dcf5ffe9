"""Where a run's turn is kept: a stored conversation's rows, or nothing (the stateless
OpenAI-compatible API). Opened before the model is leased, checkpointed while the reply
streams, finished once by the run's settle (server/turns/run.py)."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass
from typing import Any, Protocol

from server.agent import branch, prompt, provenance
from server.agent.compaction import History
from server.agent.toolbox import Ask, Progress, ToolBox, ToolOutcome, ToolTarget
from server.errors import NotFoundError, ToolCallError
from server.ids import new_id
from server.models.base import ChatRequest
from server.storage.branches import StoredBranch
from server.storage.store import Ending, Store
from server.storage.turn_rows import Earlier, OpenedTurn
from server.turns.setup import MemoryReader, TurnSetup
from server.types import (
    CitationPartJSON,
    PartJSON,
    SummaryJSON,
    Trust,
)

# What a backend that cannot go on from a partial reply is asked instead (a continuation's
# "fallback"; the reply is labelled so).
FALLBACK_CONTINUE = (
    "Your previous reply was cut off. Continue it exactly where it stopped, without "
    "repeating any of it and without any preamble."
)


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

    @property
    def earlier(self) -> Earlier | None:
        """What the reply already said, when this turn continues it (once open)."""
        ...

    def checkpoint(
        self, text: str, parts: list[PartJSON] | str | None
    ) -> concurrent.futures.Future[object] | None:
        """Queue a write of the reply so far (`parts` as a list or as its JSON text); the
        future (if any) completes when written."""
        ...

    async def finish(self, ending: Ending) -> None: ...

    @property
    def history(self) -> History | None:
        """A stored conversation's prompt, as compaction needs it (once open); None:
        stateless (the client keeps the history)."""
        ...

    @property
    def compact_only(self) -> bool:
        """The run only compacts the conversation ("Compact now"): no reply is written."""
        ...


@dataclass
class StoredHistory:
    """A stored conversation's prompt as compaction needs it (server/agent/compaction.py): its
    messages' rows, the system prompt, the summary in force, and where a new one is saved."""

    store: Store
    conversation_id: str
    model: str
    system: str | None
    summary: SummaryJSON | None
    prompt_ids: list[str]

    @classmethod
    def of(
        cls, store: Store, cid: str, model: str, stored: StoredBranch, given: branch.Given
    ) -> StoredHistory:
        """The history of a branch read from the store, as `given` to the model
        (server/agent/branch.py): its rows are the given messages' ids (the same list)."""
        return cls(store, cid, model, given.kept, stored.summary, given.ids)

    async def save_summary(self, through_id: str, content: str) -> SummaryJSON | None:
        return await self.store.save_summary(self.conversation_id, through_id, content, self.model)


class ConversationTurn:
    """A turn of a stored conversation: the user message, and the reply in its own row."""

    compact_only = False

    def __init__(self, store: Store, setup: TurnSetup) -> None:
        """`setup`: the turn as the assembly put it together (server/turns/setup.py): what it
        does (a new message, an edit, a regeneration, a continuation: server/storage/
        turn_rows.py), its model, and what it is given."""
        start = setup.start
        self._store = store
        self._images = setup.images
        self._memory = setup.memory
        self._numbers = setup.numbers
        self._tools = setup.tools
        self._documents = setup.documents
        self.sources: tuple[CitationPartJSON, ...] = ()
        self.conversation_id = setup.conversation_id
        self._start = start
        self._model = setup.model.name
        self._max_tokens = setup.max_tokens
        # Known before the rows exist: the run is named after its reply from the start (a
        # continuation's reply exists: its own id; its question's id is known once open).
        self.user_message_id = new_id()
        self.message_id = start.target if start.kind == "continue" and start.target else new_id()
        self.opened: OpenedTurn | None = None
        self.history: StoredHistory | None = None  # once open

    @property
    def title(self) -> str:
        """The conversation's title once the turn is open ("" before)."""
        return self.opened.title if self.opened is not None else ""

    @property
    def earlier(self) -> Earlier | None:
        """A continued reply's text and parts so far (once open)."""
        return self.opened.earlier if self.opened is not None else None

    async def open(self) -> ChatRequest:
        opened = await self._store.open_turn(
            self.conversation_id,
            self._start,
            self._model,
            user_message_id=self.user_message_id,
            message_id=self.message_id,
        )
        if opened is None:
            raise NotFoundError(f"no conversation with id {self.conversation_id!r}")
        # In the system message, kept first through compaction (StoredHistory.system).
        memory = await self._memory() if self._memory is not None else None
        self.opened = opened
        self.user_message_id = opened.user_message["id"]
        built = branch.of_turn(opened, memory)
        history = StoredHistory.of(
            self._store, self.conversation_id, self._model, opened.branch, built
        )
        given, ids = built.messages, history.prompt_ids
        continuing = opened.earlier is not None
        if continuing and self._start.continued == "fallback":
            given = [*given, {"role": "user", "content": FALLBACK_CONTINUE}]
            ids.append("")
        if opened.earlier is not None and self._numbers is not None:
            # The passages the reply was given and cited keep their numbers; what is found
            # now for the first time comes after them.
            self._numbers.known(p for p in opened.earlier.parts if p["type"] == "citation")
        if opened.documents and self._documents is not None:
            found = await self._documents.message(opened.user_message["content"])
            if found is not None:
                text, self.sources = found
                given, ids[:] = prompt.with_documents(given, ids, text)
        self.history = history
        if self._images is not None:
            given = await self._images(given)
        params = opened.params
        return ChatRequest(
            # In the order the prompt gives them: the passages come before the history.
            sources=(*(provenance.document(p) for p in self.sources), *built.sources),
            messages=given,
            max_tokens=self._max_tokens or params.get("max_tokens"),
            temperature=params.get("temperature"),
            top_p=params.get("top_p"),
            seed=params.get("seed"),
            continue_final=continuing and self._start.continued == "prefix",
        )

    def toolbox(self) -> ToolBox | None:
        if self.opened is not None and self.opened.tools and self._tools is not None:
            return self._tools
        return NO_TOOLS

    def checkpoint(
        self, text: str, parts: list[PartJSON] | str | None
    ) -> concurrent.futures.Future[object] | None:
        return self._store.checkpoint(self.message_id, text, parts)

    async def finish(self, ending: Ending) -> None:
        if self.opened is not None:  # else no row was written, and there is nothing to end
            await self._store.finish(self.message_id, ending)


class StatelessTurn:
    """A stateless run (the OpenAI-compatible API): the client keeps the history."""

    sources: tuple[CitationPartJSON, ...] = ()
    earlier: Earlier | None = None
    history: History | None = None
    compact_only = False

    def __init__(self, request: ChatRequest) -> None:
        self._request = request

    async def open(self) -> ChatRequest:
        return self._request

    def toolbox(self) -> ToolBox | None:
        return None

    def checkpoint(
        self, text: str, parts: list[PartJSON] | str | None
    ) -> concurrent.futures.Future[object] | None:
        return None

    async def finish(self, ending: Ending) -> None:
        pass


class CompactionTurn:
    """ "Compact now": the conversation's earlier messages summarised, whether or
    not the next turn needs it; no message is written, only the summary."""

    sources: tuple[CitationPartJSON, ...] = ()
    earlier: Earlier | None = None
    compact_only = True

    def __init__(
        self, store: Store, conversation_id: str, model: str, memory: MemoryReader | None = None
    ) -> None:
        self._store = store
        self.conversation_id = conversation_id
        self._model = model
        self._memory = memory
        self.history: StoredHistory | None = None  # once open

    async def open(self) -> ChatRequest:
        view = await self._store.view(self.conversation_id)
        if view is None:
            raise NotFoundError(f"no conversation with id {self.conversation_id!r}")
        memory = await self._memory() if self._memory is not None else None
        built = branch.of_branch(view, memory)
        self.history = StoredHistory.of(self._store, self.conversation_id, self._model, view, built)
        return ChatRequest(messages=built.messages)

    def toolbox(self) -> ToolBox | None:
        return None

    def checkpoint(
        self, text: str, parts: list[PartJSON] | str | None
    ) -> concurrent.futures.Future[object] | None:
        return None

    async def finish(self, ending: Ending) -> None:
        pass


class _NoTools:
    """A conversation turn with no tools to offer."""

    def specs(self) -> list[dict[str, Any]]:
        return []

    def instructions(self) -> str:
        return ""

    def target(self, function: str) -> ToolTarget | None:
        return None

    def trust(self, function: str) -> Trust:
        return "never"

    def timeout(self, function: str) -> float | None:
        return None

    async def call(
        self,
        function: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
        ask: Ask | None = None,
    ) -> ToolOutcome:
        raise ToolCallError(f"there is no tool named {function!r}")


NO_TOOLS: ToolBox = _NoTools()
