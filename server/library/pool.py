"""The server's parse workers as one pool: the library's files and the PDFs attached to
messages take turns in it.

Why one pool: each worker has its budget (worker.py: CPU per file, an address-space cap),
but a worker for every attached PDF had no bound on how many ran at once (eight PDF bombs
attached together: eight workers, 1.76 GB, each starved of CPU until its wall clock ran
out). Here at most `LibraryLimits.parse_workers` files are parsed at once, so what parsing
may cost is that many times `parse_memory_bytes`, whatever comes in; a file waits for a
free worker, first come first served, instead of starting a process of its own.

A worker serves file after file (starting one costs ~70 ms, ~250 ms with pypdf) and is
closed after `worker_idle` with nothing to do (its memory back until the next file). A file
whose wait or parse is cancelled kills its own worker only (worker.Parser). Once the pool
has stopped (the server's shutdown) a file is skipped, not parsed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import anyio.abc

from server.errors import SkipFile
from server.library.chunking import Chunk
from server.library.worker import PARSE_CPU_S, Parser, Skipped
from server.limits import LibraryLimits

WORKER_IDLE_S = LibraryLimits.worker_idle  # server/limits.py (read at each use: tests lower it)
STOPPED = "Parley is stopping"


class ParsePool:
    def __init__(self, size: int = LibraryLimits.parse_workers) -> None:
        if size < 1:
            raise ValueError(f"a parse pool needs at least one worker, got {size}")
        self.size = size
        self._all = [Parser() for _ in range(size)]  # each starts its process at its first file
        self._free = list(self._all)  # the last one used is at the end: the warm one first
        self._slots = anyio.Semaphore(size)  # waiters are served in the order they came
        self._idle: dict[Parser, anyio.CancelScope] = {}  # a free worker's close, pending
        self._tg: anyio.abc.TaskGroup | None = None
        self._stopped = False
        self.busy = 0  # files being parsed now
        self.most_busy = 0  # the most at once so far (for tests and the benchmark)
        self.waiting = 0  # files waiting for a worker

    @property
    def started(self) -> int:
        """Worker processes started so far."""
        return sum(parser.started for parser in self._all)

    @property
    def pids(self) -> list[int]:
        return [parser.pid for parser in self._all if parser.pid is not None]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the server runs: idle workers are closed; at the end every worker is stopped
        (mid-file, at once) and the pool skips what it is given."""
        self._stopped = False
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._tg = None
                self._stopped = True
                tg.cancel_scope.cancel()
                for parser in self._all:
                    parser.kill()
        for parser in self._all:
            await parser.aclose()

    async def cut(self, kind: str, data: bytes) -> list[Chunk] | Skipped:
        """A library file's passages, or why it is skipped (worker.Parser.cut)."""
        async with self._lent() as parser:
            if parser is None:
                return Skipped(STOPPED)
            return await parser.cut(kind, data)

    async def text(self, kind: str, data: bytes, cpu_s: float = PARSE_CPU_S) -> str | Skipped:
        """A file's whole text, or why there is none (worker.Parser.text)."""
        async with self._lent() as parser:
            if parser is None:
                return Skipped(STOPPED)
            return await parser.text(kind, data, cpu_s)

    async def pdf_text(self, data: bytes, cpu_s: float) -> str:
        """An attached PDF's text within `cpu_s` of CPU, in its turn. Raises SkipFile saying
        why there is none."""
        found = await self.text("pdf", data, cpu_s)
        if isinstance(found, Skipped):
            raise SkipFile(found.reason)
        return found

    async def warm(self) -> None:
        """Start a worker now if a free one has none (a folder was added: its start-up is
        not paid by the first file). Does nothing when every worker is busy."""
        if self._stopped or any(parser.pid is not None for parser in self._free):
            return
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            return
        parser = self._take()
        try:
            await parser.start()
        finally:
            self._give(parser)

    @contextlib.asynccontextmanager
    async def _lent(self) -> AsyncIterator[Parser | None]:
        """A free worker for one file, once there is one (None: the pool has stopped)."""
        if self._stopped:
            yield None
            return
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        parser = self._take()
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        try:
            yield None if self._stopped else parser
        finally:
            self.busy -= 1
            self._give(parser)

    def _take(self) -> Parser:
        """A free worker, its slot held by the caller; its idle close called off."""
        parser = self._free.pop()
        scope = self._idle.pop(parser, None)
        if scope is not None:
            scope.cancel()
        return parser

    def _give(self, parser: Parser) -> None:
        """A worker back, and its slot: it is closed if no file comes for WORKER_IDLE_S."""
        self._free.append(parser)
        if self._tg is not None and parser.pid is not None:
            scope = self._idle[parser] = anyio.CancelScope()
            self._tg.start_soon(self._close_when_idle, parser, scope)
        self._slots.release()

    async def _close_when_idle(self, parser: Parser, scope: anyio.CancelScope) -> None:
        with scope:
            await anyio.sleep(WORKER_IDLE_S)
            try:
                # Its slot, so no file is given the worker while it closes. None free:
                # every free worker is promised to a file that has not taken it yet.
                self._slots.acquire_nowait()
            except anyio.WouldBlock:
                return
            self._idle.pop(parser, None)
            self._free.remove(parser)
            try:
                await parser.aclose()
            finally:
                self._free.insert(0, parser)  # cold now: the last to be chosen
                self._slots.release()
