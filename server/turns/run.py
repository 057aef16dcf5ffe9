"""THE turn path: open -> lease -> stream -> checkpoint -> settle.

A run belongs to the server loop (the RunManager's task group), not to the HTTP request
that started it: the request only follows the run's events, and hanging up is a plain
synchronous `run.stop("client_hangup")`. The run opens its own turn (writes the user
message and the `streaming` reply row), so whatever it wrote, it also ends. Every ending
(completed, hang-up, shutdown, error, cancellation of the run task itself) goes through
`Run._settle`, which runs exactly once, shielded from cancellation, and never raises; no
other code writes an ending.

A turn may take several steps (the agent): a model call, the tool calls it asks for, their
results back to the model, the next model call... (server/agent/loop.py: an AgentLoop the run
owns). The reply is held once, in the run's ReplyBuffer (server/agent/buffer.py), which the
loop writes and the followers read. See docs/api.md, "Tools".
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
import anyio.lowlevel

from server.agent.approvals import Approvals
from server.agent.buffer import ReplyBuffer
from server.agent.delegate import Delegation
from server.agent.feed import FeedItem, SaveProblem
from server.agent.loop import AgentLoop
from server.agent.tree import Node
from server.errors import DiskFullError, ParleyError, ReplyGoneError, UnavailableError
from server.models.base import ChatRequest, StreamEnd
from server.models.registry import ModelEntry
from server.settings import Limits
from server.storage.store import Ending
from server.turns.ending import ending_of, failed_ending
from server.turns.sinks import TurnSink
from server.types import EndedBy, EndedJSON

log = logging.getLogger(__name__)

# The most text a follower takes in one piece (one SSE chunk); see `Run.follow`.


class Run:
    """One reply being generated. Created and driven by RunManager."""

    def __init__(
        self,
        run_id: str,
        model: ModelEntry,
        sink: TurnSink,
        limits: Limits,
        on_done: Callable[[Run], None],
        approvals: Approvals | None = None,
        delegation: Delegation | None = None,
    ) -> None:
        self.id = run_id
        self.model = model
        self.buffer = ReplyBuffer(limits.max_reply_chars, self._schedule_checkpoint)
        node = Node.root(run_id, self.buffer, limits, approvals)
        self.agent = AgentLoop(node, model, delegation)
        self.tree = node.tree  # its loops, its calls waiting for the user, its one stop
        self.stop_reason: EndedBy | None = None
        self.receipt: EndedJSON | None = None  # what the stop ended, taken when it came
        self.ending: Ending | None = None
        self._sink = sink
        self._limits = limits
        self._on_done = on_done
        self._scope = anyio.CancelScope()
        self._opened = anyio.Event()
        self._open_error: BaseException | None = None
        self._done = anyio.Event()
        self._saved = anyio.Event()
        # Why the reply's last write failed (a full disk), while it is kept only in memory.
        self.save_problem: str | None = None
        self._retry_at = 0.0
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._last_checkpoint = 0.0
        # At most one checkpoint write in flight: a slow disk (or a huge reply) never piles
        # up queued copies of the text; the next write takes the latest text when it goes.
        self._writing = False
        self._write_wanted = False

    # -- control (synchronous: safe from a `finally`, a disconnect watcher, a signal) ----

    def stop(self, reason: EndedBy) -> None:
        """Ask the run to end now. Idempotent; the first reason wins."""
        if self.ending is not None or self.stop_reason is not None:
            return
        self.stop_reason = reason
        self.receipt = self.tree.receipt()  # before anything is stopped
        self.tree.stop()
        self._scope.cancel()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def wait_done(self) -> None:
        await self._done.wait()

    @property
    def saving(self) -> bool:
        """Settled, but its final write waits for the database to take it (a full disk)."""
        return self.done and not self._saved.is_set()

    async def wait_saved(self) -> None:
        """Until the ending is on disk, or given up (the row gone, the server stopping)."""
        await self._saved.wait()

    async def wait_opened(self) -> None:
        """Until the turn is open (its rows written). Raises why it could not open."""
        await self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

    @property
    def text(self) -> str:
        return self.buffer.text

    # -- following the run -----------------------------------------------------------------

    async def follow(self, pace: float = 0.0) -> AsyncIterator[str | FeedItem | Ending]:
        """Yield the text as it grows (coalesced) and the steps' events in order, then the
        Ending once settled. `pace`: after a piece of text, wait this long (seconds) so the
        next piece holds all that came meanwhile (a window asks for a frame's worth)."""
        index = 0
        feed = self.buffer.feed
        changed = self.buffer.changed
        while True:
            # Always yield to the loop, even when data is ready: a follower must never
            # spin the loop (Queue-like fast paths do not suspend). asyncio.sleep(0) rather
            # than anyio's checkpoint, which looks up the async library on every call.
            await asyncio.sleep(0)
            if index < len(feed):
                item = feed[index]
                if not isinstance(item, str):
                    index += 1
                    yield item
                    continue
                # A bounded piece at a time: a follower far behind (a slow reader) never
                # holds a second copy of the whole reply, only one piece being sent.
                pieces: list[str] = []
                size = 0
                while index < len(feed) and size < self._limits.follow_piece_chars:
                    piece = feed[index]
                    if not isinstance(piece, str):
                        break
                    pieces.append(piece)
                    size += len(piece)
                    index += 1
                yield "".join(pieces)
                if pace:
                    await asyncio.sleep(pace)
                continue
            if self._done.is_set() and self.ending is not None:
                # Only once the settle has finished writing, so the end tells what was saved.
                yield self.ending
                return
            changed.clear()
            await changed.wait()

    # -- the run's life --------------------------------------------------------------------

    async def life(self) -> None:
        finished: StreamEnd | None = None
        error: str | None = None
        try:
            with self._scope:
                request = await self._open()
                if self._sink.earlier is not None:
                    self.buffer.resume(self._sink.earlier)
                    self.tree.reserve(self._sink.earlier.parts)
                self.buffer.given(self._sink.sources)
                sink = self._sink
                if sink.compact_only and sink.history is not None:
                    finished = await self.agent.compact(request, sink.history)
                else:
                    finished = await self.agent.run(request, sink.toolbox(), sink.history)
        except ParleyError as exc:
            # A backend that failed, or a turn that could not open (then nothing was written
            # and the settle writes nothing). An error raised while the run was already being
            # stopped is part of stopping.
            if self.stop_reason is None:
                error = str(exc)
                log.warning("run %s (%s) ended in an error: %s", self.id, self.model.name, exc)
        except Exception as exc:
            log.exception("run %s failed", self.id)
            if self.stop_reason is None:
                error = f"internal error: {type(exc).__name__}"
        finally:
            # Reached by every ending; also when the run task itself is cancelled (server
            # shutdown): the settle must still write, so it is shielded.
            with anyio.CancelScope(shield=True):
                unsaved = await self._settle(finished, error)
            await self._keep_saving(unsaved)

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

    def _schedule_checkpoint(self) -> None:
        if self._timer is not None:
            return
        due = max(self._last_checkpoint + self._limits.checkpoint_interval, self._retry_at)
        delay = due - time.monotonic()
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
            written = self._sink.checkpoint(*self.buffer.stored())
        except Exception:
            log.exception("run %s: checkpoint failed", self.id)
            return
        if written is not None:
            self._writing = True
            written.add_done_callback(self._on_checkpoint_written)

    def _on_checkpoint_written(self, written: concurrent.futures.Future[object]) -> None:
        # On the database thread: back to the run's loop.
        failure = None if written.cancelled() else written.exception()
        problem = None if failure is None else str(failure)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing more to write
            self._loop.call_soon_threadsafe(self._after_checkpoint, problem)

    def _after_checkpoint(self, problem: str | None) -> None:
        self._writing = False
        if self.ending is not None:
            return  # the settle wrote (or keeps) the ending
        if (problem is None) != (self.save_problem is None):
            self.buffer.publish(SaveProblem(problem))  # the followers say so, and when it ends
        self.save_problem = problem
        if problem is not None:
            # The text stays in memory; it is written again after a pause whether or not more
            # comes (a reply waiting on a tool sends nothing), so what was delivered reaches
            # the disk soon after space returns.
            self._retry_at = time.monotonic() + self._limits.save_retry_interval
            self._write_wanted = True
        if self._write_wanted:
            self._write_wanted = False
            self._schedule_checkpoint()

    async def _settle(self, finished: StreamEnd | None, error: str | None) -> Ending | None:
        """End the run: stop the work, release the model, save the text. Once; never raises.
        Returns the ending when its write failed in a way that may pass (a full disk): the
        run then keeps it and writes it again (`_keep_saving`)."""
        if self.ending is not None:
            return None
        unsaved: Ending | None = None
        try:
            if self.stop_reason is None and finished is None and error is None:
                error = self.buffer.over_limit  # cut at the size limit: an error that says so
            if self.stop_reason is None and finished is None and error is None:
                # Neither finished, failed nor stopped: the run task itself was cancelled.
                self.stop_reason = "shutdown"
            self.tree.stop()
            self.buffer.parts.interrupt_running()  # a step still running (or awaiting) was stopped
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            try:
                ending = ending_of(self.buffer, self.agent, self.stop_reason, finished, error)
                if ending.status == "interrupted" and self.receipt is not None:
                    ending = dataclasses.replace(ending, ended=self.receipt)
            except Exception:
                log.exception("run %s: could not describe its ending", self.id)
                ending = failed_ending(self.buffer, "internal error")
            self.ending = ending  # from here on, no checkpoint and no stop reason
            self.ending, unsaved = await self._write_final(ending)
        except Exception:
            log.exception("run %s: settle failed", self.id)
        finally:
            if self.ending is None:
                self.ending = failed_ending(self.buffer, "settle failed")
            self._done.set()
            self.buffer.changed.set()
            if unsaved is None:
                self._saved.set()
                self._on_done(self)
        return unsaved

    async def _write_final(self, ending: Ending) -> tuple[Ending, Ending | None]:
        """Write the ending (retried). Return what followers are told — the ending, with
        `save_error` if every attempt failed — and the ending still to write, if any."""
        attempts = self._limits.final_write_attempts
        for attempt in range(1, attempts + 1):
            try:
                await self._sink.finish(ending)
                return ending, None
            except DiskFullError as exc:
                log.error("run %s: final write failed, kept to write again: %s", self.id, exc)
                self.save_problem = str(exc)
                kept = f"{exc}. Parley keeps it and saves it when there is room: keep Parley open"
                return dataclasses.replace(ending, save_error=kept), ending
            except Exception as exc:
                log.error("run %s: final write failed (attempt %d): %s", self.id, attempt, exc)
                if attempt == attempts or isinstance(exc, ReplyGoneError):
                    # The last checkpoint stays on disk; the next start marks it interrupted.
                    return dataclasses.replace(ending, save_error=str(exc)), None
                await anyio.sleep(self._limits.final_write_pause * attempt)
        return ending, None  # not reached: the last attempt returns either way

    async def _keep_saving(self, ending: Ending | None) -> None:
        """Write a settled reply's ending again and again until the database takes it. The
        run stays registered meanwhile (its chat is busy: a new turn would fail to write too,
        and must not read the old reply half-saved). Not shielded: a server that stops ends
        it, and the next start marks the row interrupted with its last checkpoint."""
        if ending is None:
            return
        try:
            while True:
                await anyio.sleep(self._limits.save_retry_interval)
                try:
                    await self._sink.finish(ending)
                except ReplyGoneError as exc:
                    log.error("run %s: its reply can no longer be saved: %s", self.id, exc)
                    return
                except Exception as exc:
                    self.save_problem = str(exc)
                    continue
                self.save_problem = None
                log.warning("run %s: saved once the database took it again", self.id)
                return
        finally:
            self._saved.set()
            self._on_done(self)
