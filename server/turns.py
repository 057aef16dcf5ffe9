"""THE turn path: open -> lease -> stream -> checkpoint -> settle.

A run belongs to the server loop (the RunManager's task group), not to the HTTP request
that started it: the request only follows the run's events, and hanging up is a plain
synchronous `run.stop("client_hangup")`. The run opens its own turn (writes the user
message and the `streaming` reply row), so whatever it wrote, it also ends. Every ending
(completed, hang-up, shutdown, error, cancellation of the run task itself) goes through
`Run._settle`, which runs exactly once, shielded from cancellation, and never raises; no
other code writes an ending.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.abc

from server.errors import ParleyError, UnavailableError
from server.models.base import ChatRequest, StopSignal, StreamEnd, StreamInfo, TextDelta
from server.models.registry import ModelEntry
from server.settings import Limits
from server.store import Ending
from server.turn_sinks import TurnSink
from server.types import EndedBy, Usage

log = logging.getLogger(__name__)

# The most text a follower takes in one piece (one SSE chunk); see `Run.follow`.
FOLLOW_PIECE_CHARS = 65_536


class Run:
    """One reply being generated. Created and driven by RunManager."""

    def __init__(
        self,
        run_id: str,
        model: ModelEntry,
        sink: TurnSink,
        limits: Limits,
        on_done: Callable[[Run], None],
    ) -> None:
        self.id = run_id
        self.model = model
        self.parts: list[str] = []
        self._chars = 0
        self._over_limit: str | None = None  # why the reply was cut at the size limit
        self.stop_reason: EndedBy | None = None
        self.ending: Ending | None = None
        self._info: Usage = {}
        self._sink = sink
        self._limits = limits
        self._on_done = on_done
        self._signal = StopSignal()
        self._scope = anyio.CancelScope()
        # A plain asyncio.Event, set per delta and cleared by a follower before it waits:
        # creating an anyio.Event per delta cost a quarter of the relay's CPU.
        self._changed = asyncio.Event()
        self._opened = anyio.Event()
        self._open_error: BaseException | None = None
        self._done = anyio.Event()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._last_checkpoint = 0.0
        # At most one checkpoint write in flight: a slow disk (or a huge reply) never piles
        # up queued copies of the text; the next write takes the latest text when it goes.
        self._writing = False
        self._write_wanted = False
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

    async def wait_opened(self) -> None:
        """Until the turn is open (its rows written). Raises why it could not open."""
        await self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

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
                # A bounded piece at a time: a follower far behind (a slow reader) never
                # holds a second copy of the whole reply, only one piece being sent.
                end, size = index, 0
                while end < len(self.parts) and size < FOLLOW_PIECE_CHARS:
                    size += len(self.parts[end])
                    end += 1
                batch = self.parts[index:end]
                index = end
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
                request = await self._open()
                await self.model.lease.acquire(self)
                self._started_at = time.monotonic()
                events = self.model.backend.stream(request, self._signal)
                streamed = True
                async with contextlib.aclosing(events):
                    async for event in events:
                        if isinstance(event, TextDelta):
                            if not self._append(event.text):
                                break  # at the size limit: closing `events` stops the work
                        elif isinstance(event, StreamInfo):
                            self._info.update(event.usage)
                        else:
                            finished = event
        except ParleyError as exc:
            # A backend that failed, or a turn that could not open (then nothing was written
            # and the settle writes nothing). An error raised while the run was already being
            # stopped is part of stopping.
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

    async def _open(self) -> ChatRequest:
        # Shielded: once the store is asked to open the turn, the run must learn whether the
        # rows exist, or a cancel mid-way could leave a `streaming` row that nobody settles.
        try:
            if self.stop_reason is not None:  # stopped before it began: write nothing
                raise UnavailableError(
                    f"the reply was stopped before it began ({self.stop_reason})",
                    code="shutting_down" if self.stop_reason == "shutdown" else "stopped",
                )
            with anyio.CancelScope(shield=True):
                request = await self._sink.open()
        except BaseException as exc:
            self._open_error = exc
            raise
        finally:
            self._opened.set()
        return request

    def _append(self, text: str) -> bool:
        """Add text to the reply. False once the reply is at `Limits.max_reply_chars` (the
        text is cut there, and the run must end)."""
        if not text:
            return True
        room = self._limits.max_reply_chars - self._chars
        if len(text) > room:
            cap = self._limits.max_reply_chars
            self._over_limit = (
                f"the reply reached Parley's limit of {cap:,} characters and was cut there "
                "(--max-reply-chars)"
            )
            text = text[:room]
            if not text:
                return False
        self._chars += len(text)
        if self._first_token_at is None:
            self._first_token_at = time.monotonic()
        self.parts.append(text)
        self._wake()
        self._schedule_checkpoint()
        return self._over_limit is None

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
        if self._writing:
            self._write_wanted = True  # taken when the write in flight is done
            return
        self._last_checkpoint = time.monotonic()
        try:
            written = self._sink.checkpoint(self.text)
        except Exception:
            log.exception("run %s: checkpoint failed", self.id)
            return
        if written is not None:
            self._writing = True
            written.add_done_callback(self._on_checkpoint_written)

    def _on_checkpoint_written(self, _written: concurrent.futures.Future[object]) -> None:
        # On the database thread: back to the run's loop.
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing more to write
            self._loop.call_soon_threadsafe(self._after_checkpoint)

    def _after_checkpoint(self) -> None:
        self._writing = False
        if self._write_wanted:
            self._write_wanted = False
            self._schedule_checkpoint()

    async def _settle(self, streamed: bool, finished: StreamEnd | None, error: str | None) -> None:
        """End the run: stop the work, release the model, save the text. Once; never raises."""
        if self.ending is not None:
            return
        try:
            if self.stop_reason is None and finished is None and error is None:
                error = self._over_limit  # cut at the size limit: an error that says so
            if self.stop_reason is None and finished is None and error is None:
                # Neither finished, failed nor stopped: the run task itself was cancelled.
                self.stop_reason = "shutdown"
            self._signal.request()
            await self._release_model(streamed)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            try:
                ending = self._ending(finished, error)
            except Exception:
                log.exception("run %s: could not describe its ending", self.id)
                ending = self._failed_ending("internal error")
            self.ending = ending  # from here on, no checkpoint and no stop reason
            self.ending = await self._write_final(ending)
        except Exception:
            log.exception("run %s: settle failed", self.id)
        finally:
            if self.ending is None:
                self.ending = self._failed_ending("settle failed")
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
            return Ending(
                content=self.text,
                status="error",
                ended_by="error",
                error=error,
                usage=usage,
                completed_at=now,
            )
        if finished is not None:
            return Ending(
                content=self.text,
                status="completed",
                ended_by=None,
                usage=usage,
                completed_at=now,
                finish_reason=finished.finish_reason,
            )
        return Ending(
            content=self.text,
            status="interrupted",
            ended_by=self.stop_reason,
            usage=usage,
            completed_at=now,
        )

    def _failed_ending(self, error: str) -> Ending:
        return Ending(
            content=self.text,
            status="error",
            ended_by="error",
            error=error,
            completed_at=time.time(),
        )

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

    async def _write_final(self, ending: Ending) -> Ending:
        """Write the ending (retried); return it, with `save_error` if every attempt failed."""
        attempts = self._limits.final_write_attempts
        for attempt in range(1, attempts + 1):
            try:
                await self._sink.finish(ending)
                return ending
            except Exception as exc:
                log.error("run %s: final write failed (attempt %d): %s", self.id, attempt, exc)
                if attempt == attempts:
                    # The last checkpoint stays on disk; the next start marks it interrupted.
                    return dataclasses.replace(ending, save_error=str(exc))
                await anyio.sleep(self._limits.final_write_pause * attempt)
        return ending  # not reached: the last attempt returns either way
