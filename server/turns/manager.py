"""The RunManager: owns every run (its task group), starts turns, stops them all at shutdown."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.abc

from server.agent.approvals import Approvals, ChatGrants
from server.agent.delegate import Delegation
from server.errors import ConflictError, NotFoundError, UnavailableError
from server.ids import new_id
from server.models.base import ChatRequest
from server.models.registry import ModelEntry
from server.settings import Limits
from server.storage.store import Store
from server.turns.run import Run
from server.turns.setup import MemoryReader, TurnSetup
from server.turns.sinks import (
    CompactionTurn,
    ConversationTurn,
    StatelessTurn,
    TurnSink,
)


class RunManager:
    """Owns every run: starts it in its task group, knows which conversation it belongs to,
    and at shutdown stops them all and waits (bounded) until each has settled.

    A run is registered from the moment it is started, before its turn is opened, and
    forgotten once it has settled: a conversation is busy exactly while one of its runs is
    registered, and a shutdown never misses a run that is still opening.
    """

    def __init__(self, store: Store, limits: Limits) -> None:
        self._store = store
        self._limits = limits
        self._runs: dict[str, Run] = {}
        self._run_conversation: dict[str, str] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._closing_since: float | None = None
        # Tools allowed "for this chat", per conversation, while Parley runs.
        self.grants = ChatGrants()
        # Told when a run has ended: the models it used may be idle now (their keep-alive).
        self.on_run_ended: Callable[[], None] | None = None

    @property
    def active_count(self) -> int:
        return len(self._runs)

    @property
    def closing(self) -> bool:
        """The server is stopping: no new run starts, and long reads should end."""
        return self._closing_since is not None

    def runs(self) -> list[Run]:
        return list(self._runs.values())

    def using(self, model: ModelEntry) -> bool:
        """A run not ended uses the model: its own loop, a sub-agent's or a compaction's —
        between model calls too (while tools run it holds no lease)."""
        return bool(self._users(model))

    async def stop_using(self, model: ModelEntry, within: float) -> bool:
        """Stop every run whose tree uses the model, as the user's Stop (they asked for the
        model to go): each settles the one way, its whole tree ended. True once all have
        ended within `within` seconds."""
        users = self._users(model)
        for run in users:
            run.stop("client_hangup")
        with anyio.move_on_after(within):
            for run in users:
                await run.wait_done()
        return all(run.done for run in users)

    def _users(self, model: ModelEntry) -> list[Run]:
        return [
            run for run in self._runs.values() if not run.done
            if any(loop.model is model for loop in run.tree.members)
        ]  # fmt: skip

    def check_idle(self, conversation_id: str) -> None:
        """Raise ConflictError while a run of the conversation streams, or waits to save."""
        runs = self.runs_of(conversation_id)
        if runs and all(run.saving for run in runs):
            problem = next((run.save_problem for run in runs if run.save_problem), None)
            raise ConflictError(
                "this conversation's last reply is not saved yet"
                + (f" ({problem})" if problem else "")
                + "; Parley saves it when there is room again",
                code="reply_not_saved",
            )
        if runs:
            raise ConflictError(
                "this conversation's reply is still streaming; stop it or wait for it",
                code="reply_in_progress",
            )

    def runs_of(self, conversation_id: str) -> list[Run]:
        """The runs (opening, streaming or settling) of this conversation's turns."""
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
                began = self.shutdown()
                # Counted from when shutdown began (often earlier, from the server's stop),
                # like uvicorn's graceful backstop: see the Limits docstring for the order.
                remaining = began + self._limits.shutdown_runs_wait - time.monotonic()
                with anyio.CancelScope(shield=True), anyio.move_on_after(remaining):
                    for run in self.runs():
                        await run.wait_done()
                    # A reply kept in memory (a full disk) has until then to be written.
                    for run in self.runs():
                        await run.wait_saved()
                self._tg = None
                tg.cancel_scope.cancel()

    def shutdown(self) -> float:
        """Refuse new runs and stop every running one with ended_by = "shutdown".

        Returns when shutdown began (time.monotonic), at the first call.
        """
        if self._closing_since is None:
            self._closing_since = time.monotonic()
        for run in self.runs():
            run.stop("shutdown")
        return self._closing_since

    async def start_turn(self, setup: TurnSetup) -> tuple[Run, ConversationTurn]:
        """Start a run that opens the turn (both messages written before any generation),
        and return once it is open. Raises ConflictError, UnavailableError, and what opening
        raises (NotFoundError, StorageError); then nothing was written."""
        conversation_id = setup.conversation_id
        self._check_open()
        self.check_idle(conversation_id)
        turn = ConversationTurn(self._store, setup)
        if turn.message_id in self._runs:
            # A continuation is named after its reply: one that streams now (this
            # conversation's would have been refused above) is another conversation's.
            raise NotFoundError(
                f"no message with id {turn.message_id!r} in conversation {conversation_id!r}"
            )
        approvals = Approvals(conversation_id, self.grants)
        run = self._start(turn.message_id, setup.model, turn, approvals, setup.delegation)
        self._run_conversation[run.id] = conversation_id
        try:
            await run.wait_opened()
        except BaseException:
            # Nobody will follow this run (the request failed or was cancelled): a plain
            # synchronous stop; the run settles whatever it wrote itself.
            run.stop("client_hangup")
            raise
        return run, turn

    def start_compaction(
        self, conversation_id: str, model: ModelEntry, memory: MemoryReader | None = None
    ) -> Run:
        """ "Compact now": a run that summarises the conversation's earlier messages and
        writes no reply (server/agent/compaction.py); `memory`: reads the chat's memory, in
        its prompt as in a turn's. Raises ConflictError while a reply of the conversation
        streams (and the other way round)."""
        self._check_open()
        self.check_idle(conversation_id)
        sink = CompactionTurn(self._store, conversation_id, model.name, memory)
        approvals = Approvals(conversation_id, self.grants)
        run = self._start(f"compact-{new_id()}", model, sink, approvals)
        self._run_conversation[run.id] = conversation_id
        return run

    def start_stateless(self, model: ModelEntry, request: ChatRequest) -> Run:
        """A run that saves nothing (the client sent the whole history), same path otherwise."""
        self._check_open()
        return self._start(f"chatcmpl-{new_id()}", model, StatelessTurn(request))

    def _check_open(self) -> None:
        if self._closing_since is not None or self._tg is None:
            raise UnavailableError("the server is shutting down", code="shutting_down")

    def _start(
        self,
        run_id: str,
        model: ModelEntry,
        sink: TurnSink,
        approvals: Approvals | None = None,
        delegation: Delegation | None = None,
    ) -> Run:
        if self._tg is None:
            raise UnavailableError("the server is shutting down", code="shutting_down")
        run = Run(run_id, model, sink, self._limits, self._forget, approvals, delegation)
        self._runs[run.id] = run
        self._tg.start_soon(run.life, name=f"run {run.id}")
        return run

    def _forget(self, run: Run) -> None:
        if self._runs.get(run.id) is not run:
            return  # another run holds the id: nothing of this one's to forget
        del self._runs[run.id]
        self._run_conversation.pop(run.id, None)
        if self.on_run_ended is not None:
            self.on_run_ended()
