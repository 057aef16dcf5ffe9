"""The RunManager: owns every run (its task group), starts turns, stops them all at shutdown."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

import anyio
import anyio.abc

from server.errors import ConflictError, NotFoundError, UnavailableError
from server.models.base import ChatRequest
from server.models.registry import ModelEntry
from server.settings import Limits
from server.store import Ending, OpenedTurn, Store, new_id
from server.turns import MessageSink, NullSink, Run, TurnSink


class RunManager:
    """Owns every run: starts them in its task group, stops them all at shutdown."""

    def __init__(self, store: Store, limits: Limits) -> None:
        self._store = store
        self._limits = limits
        self._runs: dict[str, Run] = {}
        self._busy_conversations: set[str] = set()
        self._run_conversation: dict[str, str] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._closing = False

    @property
    def active_count(self) -> int:
        return len(self._runs)

    def runs(self) -> list[Run]:
        return list(self._runs.values())

    def is_opening(self, conversation_id: str) -> bool:
        """A turn of this conversation is being opened but has no run yet."""
        return conversation_id in self._busy_conversations and not self.runs_of(conversation_id)

    def runs_of(self, conversation_id: str) -> list[Run]:
        return [
            run
            for run_id, run in self._runs.items()
            if self._run_conversation.get(run_id) == conversation_id
        ]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the task group that runs live in; on exit, stop every run and wait for it."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self.shutdown()
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(self._limits.stop_timeout + 5),
                ):
                    for run in self.runs():
                        await run.wait_done()
                self._tg = None
                tg.cancel_scope.cancel()

    def shutdown(self) -> None:
        """Refuse new runs and stop every running one with ended_by = "shutdown"."""
        self._closing = True
        for run in self.runs():
            run.stop("shutdown")

    async def start_turn(
        self, conversation_id: str, content: str, model: ModelEntry
    ) -> tuple[Run, OpenedTurn]:
        """Open the turn (both messages written before any generation) and start its run."""
        self._check_open()
        if conversation_id in self._busy_conversations:
            raise ConflictError(
                "this conversation's reply is still streaming; stop it or wait for it",
                code="reply_in_progress",
            )
        self._busy_conversations.add(conversation_id)
        opened = None
        try:
            opened = await self._store.open_turn(conversation_id, content, model.name)
            if opened is None:
                raise NotFoundError(f"no conversation with id {conversation_id!r}")
            message_id = opened.assistant_message["id"]
            request = ChatRequest(messages=opened.prompt)
            run = self._start(message_id, model, request, MessageSink(self._store, message_id))
        except BaseException:
            self._busy_conversations.discard(conversation_id)
            if opened is not None:
                # The rows exist but no run will settle them: end the reply here.
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    ending = Ending("", "interrupted", "shutdown", None, None, time.time())
                    await self._store.finish(opened.assistant_message["id"], ending)
            raise
        self._run_conversation[run.id] = conversation_id
        if self._closing:
            # Shutdown began while the turn was being opened: settle it like the others.
            run.stop("shutdown")
        return run, opened

    def start_stateless(self, model: ModelEntry, request: ChatRequest) -> Run:
        """A run that saves nothing (the client sent the whole history), same path otherwise."""
        self._check_open()
        return self._start(f"chatcmpl-{new_id()}", model, request, NullSink())

    def _check_open(self) -> None:
        if self._closing or self._tg is None:
            raise UnavailableError("the server is shutting down", code="shutting_down")

    def _start(self, run_id: str, model: ModelEntry, request: ChatRequest, sink: TurnSink) -> Run:
        if self._tg is None:
            raise UnavailableError("the server is shutting down", code="shutting_down")
        run = Run(run_id, model, request, sink, self._limits, self._forget)
        self._runs[run.id] = run
        self._tg.start_soon(run.life, name=f"run {run.id}")
        return run

    def _forget(self, run: Run) -> None:
        self._runs.pop(run.id, None)
        conversation_id = self._run_conversation.pop(run.id, None)
        if conversation_id is not None:
            self._busy_conversations.discard(conversation_id)
