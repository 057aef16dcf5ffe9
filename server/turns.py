"""THE turn path: open -> lease -> stream -> checkpoint -> settle.

A run belongs to the server loop (the RunManager's task group), not to the HTTP request
that started it: the request only follows the run's events, and hanging up is a plain
synchronous `run.stop("client_hangup")`. Every ending (completed, hang-up, shutdown, error,
cancellation of the run task itself) goes through `Run._settle`, which runs exactly once,
shielded from cancellation, and never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Protocol

import anyio
import anyio.abc

from server.errors import BackendError
from server.models.base import ChatRequest, StopSignal, StreamEnd, StreamInfo, TextDelta
from server.models.registry import ModelEntry
from server.settings import Limits
from server.store import Ending, Store
from server.types import EndedBy, FinishReason, Usage

log = logging.getLogger(__name__)

FINAL_WRITE_ATTEMPTS = 3


class TurnSink(Protocol):
    """Where a run's text is kept: checkpoints while streaming, one final write."""

    def checkpoint(self, text: str) -> None: ...

    async def finish(self, ending: Ending) -> None: ...


class MessageSink:
    """Keeps the reply in its assistant message row."""

    def __init__(self, store: Store, message_id: str) -> None:
        self._store = store
        self._message_id = message_id

    def checkpoint(self, text: str) -> None:
        self._store.checkpoint(self._message_id, text)

    async def finish(self, ending: Ending) -> None:
        await self._store.finish(self._message_id, ending)


class NullSink:
    """A stateless run (the OpenAI-compatible API): the client keeps the history."""

    def checkpoint(self, text: str) -> None:
        pass

    async def finish(self, ending: Ending) -> None:
        pass


class Run:
    """One reply being generated. Created and driven by RunManager."""

    def __init__(
        self,
        run_id: str,
        model: ModelEntry,
        request: ChatRequest,
        sink: TurnSink,
        limits: Limits,
        on_done: Callable[[Run], None],
    ) -> None:
        self.id = run_id
        self.model = model
        self.request = request
        self.created = time.time()
        self.parts: list[str] = []
        self.stop_reason: EndedBy | None = None
        self.ending: Ending | None = None
        self.finish_reason: FinishReason | None = None
        self.save_error: str | None = None
        self._info: Usage = {}
        self._sink = sink
        self._limits = limits
        self._on_done = on_done
        self._signal = StopSignal()
        self._scope = anyio.CancelScope()
        # A plain asyncio.Event, set per delta and cleared by a follower before it waits:
        # creating an anyio.Event per delta cost a quarter of the relay's CPU.
        self._changed = asyncio.Event()
        self._done = anyio.Event()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._last_checkpoint = 0.0
        self._started_at: float | None = None
        self._first_token_at: float | None = None

    # -- control (synchronous: safe from a `finally`, a disconnect watcher, a signal) ----

    def stop(self, reason: EndedBy) -> None:
        """Ask the run to end now. Idempotent; the first reason wins."""
        if self.ending is not None or self.stop_reason is not None:
            return
        self.stop_reason = reason
        self._signal.request()
        self._scope.cancel()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def wait_done(self) -> None:
        await self._done.wait()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    # -- following the run -----------------------------------------------------------------

    async def follow(self) -> AsyncIterator[str | Ending]:
        """Yield the text as it grows (coalesced), then the Ending once settled."""
        index = 0
        while True:
            # Always yield to the loop, even when data is ready: a follower must never
            # spin the loop (Queue-like fast paths do not suspend). asyncio.sleep(0) rather
            # than anyio's checkpoint, which looks up the async library on every call.
            await asyncio.sleep(0)
            if index < len(self.parts):
                batch = self.parts[index:]
                index += len(batch)
                yield "".join(batch)
                continue
            if self._done.is_set() and self.ending is not None:
                # Only once the settle has finished writing, so the end tells what was saved.
                yield self.ending
                return
            self._changed.clear()
            await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()

    # -- the run's life --------------------------------------------------------------------

    async def life(self) -> None:
        streamed = False
        finished: StreamEnd | None = None
        error: str | None = None
        try:
            with self._scope:
                await self.model.lease.acquire(self)
                self._started_at = time.monotonic()
                events = self.model.backend.stream(self.request, self._signal)
                streamed = True
                async with contextlib.aclosing(events):
                    async for event in events:
                        if isinstance(event, TextDelta):
                            self._append(event.text)
                        elif isinstance(event, StreamInfo):
                            self._info.update(event.usage)
                        else:
                            finished = event
        except BackendError as exc:
            # An error raised while the run was already being stopped is part of stopping.
            if self.stop_reason is None:
                error = str(exc)
        except Exception as exc:
            log.exception("run %s failed", self.id)
            if self.stop_reason is None:
                error = f"internal error: {type(exc).__name__}"
        finally:
            # Reached by every ending; also when the run task itself is cancelled (server
            # shutdown): the settle must still write, so it is shielded.
            with anyio.CancelScope(shield=True):
                await self._settle(streamed, finished, error)

    def _append(self, text: str) -> None:
        if not text:
            return
        if self._first_token_at is None:
            self._first_token_at = time.monotonic()
        self.parts.append(text)
        self._wake()
        self._schedule_checkpoint()

    def _schedule_checkpoint(self) -> None:
        if self._timer is not None:
            return
        delay = self._last_checkpoint + self._limits.checkpoint_interval - time.monotonic()
        if delay <= 0:
            self._checkpoint()
        else:
            self._timer = self._loop.call_later(delay, self._checkpoint)

    def _checkpoint(self) -> None:
        self._timer = None
        if self.ending is not None:
            return
        self._last_checkpoint = time.monotonic()
        try:
            self._sink.checkpoint(self.text)
        except Exception:
            log.exception("run %s: checkpoint failed", self.id)

    async def _settle(self, streamed: bool, finished: StreamEnd | None, error: str | None) -> None:
        """End the run: stop the work, release the model, save the text. Once; never raises."""
        if self.ending is not None:
            return
        try:
            if self.stop_reason is None and finished is None and error is None:
                # Neither finished, failed nor stopped: the run task itself was cancelled.
                self.stop_reason = "shutdown"
            self._signal.request()
            await self._release_model(streamed)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            try:
                self.ending = self._ending(finished, error)
            except Exception:
                log.exception("run %s: could not describe its ending", self.id)
                self.ending = Ending(
                    self.text, "error", "error", "internal error", None, time.time()
                )
            await self._write_final(self.ending)
        except Exception:
            log.exception("run %s: settle failed", self.id)
        finally:
            if self.ending is None:
                self.ending = Ending(
                    self.text, "error", "error", "settle failed", None, time.time()
                )
            self._done.set()
            self._wake()
            self._on_done(self)

    async def _release_model(self, streamed: bool) -> None:
        lease = self.model.lease
        if not lease.held_by(self):
            return
        if streamed:
            with anyio.move_on_after(self._limits.stop_timeout):
                await self._signal.wait_stopped()
        if self._signal.stopped or not streamed:
            lease.release(self)
            return
        log.error(
            "run %s: the model's work did not stop within %.1fs; "
            "the model stays in use until it does",
            self.id,
            self._limits.stop_timeout,
        )

        def release_late() -> None:
            lease.release(self)

        self._signal.when_stopped(release_late)

    def _ending(self, finished: StreamEnd | None, error: str | None) -> Ending:
        now = time.time()
        usage = self._usage(finished.usage if finished else None)
        if error is not None:
            return Ending(self.text, "error", "error", error, usage, now)
        if finished is not None:
            self.finish_reason = finished.finish_reason
            return Ending(self.text, "completed", None, None, usage, now)
        return Ending(self.text, "interrupted", self.stop_reason, None, usage, now)

    def _usage(self, reported: Usage | None) -> Usage:
        usage: Usage = {**self._info, **(reported or {})}
        if not isinstance(usage.get("completion_tokens"), int):
            usage["completion_tokens"] = len(self.parts)
            usage["completion_tokens_estimated"] = True
        if self._started_at is not None and self._first_token_at is not None:
            end = time.monotonic()
            usage["ttft_ms"] = round((self._first_token_at - self._started_at) * 1000, 1)
            gen_s = end - self._first_token_at
            if gen_s > 0 and usage["completion_tokens"] > 1:
                usage["tokens_per_s"] = round((usage["completion_tokens"] - 1) / gen_s, 1)
        return usage

    async def _write_final(self, ending: Ending) -> None:
        for attempt in range(1, FINAL_WRITE_ATTEMPTS + 1):
            try:
                await self._sink.finish(ending)
                self.save_error = None
                return
            except Exception as exc:
                log.error("run %s: final write failed (attempt %d): %s", self.id, attempt, exc)
                # The last checkpoint stays on disk; the next start marks it interrupted.
                self.save_error = str(exc)
                if attempt < FINAL_WRITE_ATTEMPTS:
                    await anyio.sleep(0.2 * attempt)
