"""Parsing and cutting a library file in a worker process: hostile input gets a budget.

Why a process: a 21 KB PDF of 40 pages sharing one 5 MB content stream costs pypdf
~10 s of CPU a page. In a thread it held the indexer for minutes, slowed the whole server (it
shares the GIL), and could not be stopped: removing its folder left the thread burning CPU.
A process can be killed at once, and its CPU time, memory and output can be bounded:

- CPU: each file may use `PARSE_CPU_S` seconds of the worker's CPU. A timer on the worker's
  own CPU time (`ITIMER_PROF`) stops the parse in Python code; `RLIMIT_CPU`, set a little
  above it for each file, kills the worker if it is stuck in C code; and the parent kills it
  after a generous wall-time bound (the machine may be busy), whichever comes first.
- Output: a file that gives more than `LibraryLimits.max_text_chars` characters of text is
  skipped (a PDF is stopped at the page that passes it).
- Memory: the worker's address space is capped (`RLIMIT_AS` where there is one, at
  `MEMORY_BYTES`): a file that needs more is skipped and the worker that ran out replaced;
  so is one that grew past `LibraryLimits.worker_retire_bytes` (Python keeps what it
  allocated: a worker that parsed one big PDF would hold ~250 MB while idle).

Each is skipped with its reason, which the user sees. A worker that dies (a crash, a kill, a
limit) skips the file it was on, and a new one serves the next. One worker serves file after
file (starting one costs ~70 ms, ~250 ms with pypdf); how many run at once, and when an idle
one is closed, is the pool's (pool.py), which the library and attached PDFs share.

The file's bytes are read by the parent (`reading.read_inside`, which is where the library's
rules on links, FIFOs and sizes live, and whose bytes the parent hashes anyway) and handed
over on the worker's stdin; the worker opens no file. Like the watcher, it ends when its stdin
closes; on Linux the kernel also kills it when Parley ends (even by kill -9) mid-file;
elsewhere it outlives Parley by at most the file it is on (bounded by its budget).

Protocol, both ways framed by lengths (network order): the parent sends `!II` (header length,
data length), a JSON header `{"kind", "cpu_s", "max_chars", "retire", "whole"}` (`retire`:
the peak memory past which the worker ends after this file) and the file's bytes; the worker
answers `!I` and a JSON object, `{"chunks": [[text, page, line_start, line_end], ...]}` (or
with `whole`, an attachment's, `{"text": text}`) or `{"skipped": reason}`, with
`"retire": true` when it must not be used again. The worker's side is worker_process.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.buffered import BufferedByteReceiveStream

from server.library import worker_process
from server.library.chunking import Chunk
from server.library.worker_process import over_time
from server.limits import LibraryLimits

PARSE_CPU_S = LibraryLimits.parse_cpu  # server/limits.py
MEMORY_BYTES = LibraryLimits.parse_memory_bytes  # server/limits.py
WALL_FACTOR = LibraryLimits.parse_wall_factor  # the parent's bound: the CPU budget this many
WALL_GRACE_S = LibraryLimits.parse_wall_grace  # times over, plus a grace (server/limits.py)
STOP_WAIT_S = LibraryLimits.worker_stop_wait
BIG_ANSWER = 1 << 20  # decoded in a thread, not on the event loop
_HEAD, _LENGTH = worker_process.HEAD, worker_process.LENGTH


@dataclass(frozen=True)
class Skipped:
    """The file is not indexed: `reason` says why (shown to the user)."""

    reason: str


class Parser:
    """The worker, started at the first file and replaced when it dies or is stopped. One
    file at a time (the pool lends it to one caller). Cancelling `cut` kills the worker at
    once."""

    def __init__(self) -> None:
        self._process: anyio.abc.Process | None = None
        self._answers: BufferedByteReceiveStream | None = None
        self._dying: list[anyio.abc.Process] = []  # killed, to be reaped
        self._starting = anyio.Lock()
        self.started = 0  # workers started so far (for tests and the benchmark)
        self.ends: list[str] = []  # why each worker stopped, oldest first (for tests)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        """Start the worker now, if it is not running (else it starts at the next file)."""
        await self._worker()

    async def cut(self, kind: str, data: bytes) -> list[Chunk] | Skipped:
        """The file's passages, or why it is skipped. Never raises for a bad file."""
        answer = await self._ask(kind, data, PARSE_CPU_S, whole=False)
        if isinstance(answer, Skipped):
            return answer
        return [Chunk(text, page, start, end) for text, page, start, end in answer["chunks"]]

    async def text(self, kind: str, data: bytes, cpu_s: float) -> str | Skipped:
        """The file's whole text (a PDF's pages apart by a blank line), or why not."""
        answer = await self._ask(kind, data, cpu_s, whole=True)
        return answer if isinstance(answer, Skipped) else str(answer["text"])

    async def _ask(self, kind: str, data: bytes, cpu_s: float, *, whole: bool) -> Any:
        max_chars = LibraryLimits.max_text_chars  # read now: tests lower it
        requests, answers = await self._worker()
        header = json.dumps(
            {
                "kind": kind,
                "cpu_s": cpu_s,
                "max_chars": max_chars,
                "retire": LibraryLimits.worker_retire_bytes,
                "whole": whole,
            }
        ).encode()
        try:
            with anyio.move_on_after(cpu_s * WALL_FACTOR + WALL_GRACE_S) as wall:
                await requests.send(_HEAD.pack(len(header), len(data)) + header + data)
                size = _LENGTH.unpack(await answers.receive_exactly(_LENGTH.size))[0]
                raw = await answers.receive_exactly(size)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return Skipped(await self._died(cpu_s))
        except BaseException:  # cancelled (folder removed, shutdown): stop its work now
            self.ends.append("cancelled")
            self.kill()
            await self._reap()
            raise
        if wall.cancelled_caught:
            self.ends.append("wall clock")
            self.kill()
            await self._reap()
            return Skipped(over_time(cpu_s))
        if size > BIG_ANSWER:
            answer = await anyio.to_thread.run_sync(json.loads, raw)
        else:
            answer = json.loads(raw)
        if answer.get("retire"):
            self.ends.append("retired")
            self.kill()
        if "skipped" in answer:
            return Skipped(str(answer["skipped"]))
        return answer

    def kill(self) -> None:
        """Stop the worker now, whatever it is doing (`_reap` then waits for it)."""
        process, self._process, self._answers = self._process, None, None
        if process is not None:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            self._dying.append(process)

    async def aclose(self) -> None:
        """Let the worker end (its stdin closes), killing it if it does not."""
        process, self._process, self._answers = self._process, None, None
        if process is not None:
            with anyio.CancelScope(shield=True):  # a shutdown must not leave it running
                if process.stdin is not None:
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await process.stdin.aclose()
                with anyio.move_on_after(STOP_WAIT_S):
                    await process.wait()
                self._dying.append(process)
                if process.returncode is None:
                    process.kill()
        await self._reap()

    async def _reap(self) -> None:
        """Wait for the workers killed (milliseconds) and close their pipes. Shielded: it
        runs as a cancelled scan or a shutdown unwinds."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_WAIT_S):
            while self._dying:
                await self._dying[-1].aclose()
                self._dying.pop()

    async def _worker(
        self,
    ) -> tuple[anyio.abc.ByteSendStream, BufferedByteReceiveStream]:
        async with self._starting:
            return await self._running_worker()

    async def _running_worker(
        self,
    ) -> tuple[anyio.abc.ByteSendStream, BufferedByteReceiveStream]:
        process = self._process
        if process is not None and process.returncode is not None:
            self.kill()
            process = None
        await self._reap()
        if process is None or process.stdin is None or self._answers is None:
            process = await anyio.open_process(
                [
                    sys.executable,
                    "-m",
                    "server.library.worker_process",
                    str(MEMORY_BYTES),
                    str(os.getpid()),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            if process.stdin is None or process.stdout is None:
                raise RuntimeError("the parser's pipes did not open")
            self._process = process
            self._answers = BufferedByteReceiveStream(process.stdout)
            self.started += 1
        return process.stdin, self._answers

    async def _died(self, cpu_s: float) -> str:
        process = self._process
        self.kill()
        await self._reap()
        why = _why(process.returncode if process is not None else None, cpu_s)
        self.ends.append(why)
        return why


def _why(returncode: int | None, cpu_s: float) -> str:
    if returncode is not None and returncode < 0:
        number = -returncode
        if number == getattr(signal, "SIGXCPU", None):
            return over_time(cpu_s)
        with contextlib.suppress(ValueError):
            return f"the parser crashed on it ({signal.Signals(number).name})"
    return f"the parser crashed on it (exit {returncode})"
