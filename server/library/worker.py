"""Parsing and cutting a library file in a worker process: hostile input gets a budget.

Why a process (issue 38): a 21 KB PDF of 40 pages sharing one 5 MB content stream costs pypdf
~10 s of CPU a page. In a thread it held the indexer for minutes, slowed the whole server (it
shares the GIL), and could not be stopped: removing its folder left the thread burning CPU.
A process can be killed at once, and its CPU time, memory and output can be bounded:

- CPU: each file may use `PARSE_CPU_S` seconds of the worker's CPU. A timer on the worker's
  own CPU time (`ITIMER_PROF`) stops the parse in Python code; `RLIMIT_CPU`, set a little
  above it for each file, kills the worker if it is stuck in C code; and the parent kills it
  after a generous wall-time bound (the machine may be busy), whichever comes first.
- Output: a file that gives more than `MAX_TEXT_CHARS` characters of text is skipped (a PDF
  is stopped at the page that passes it).
- Memory: the worker's address space is capped (`RLIMIT_AS` where there is one, at
  `MEMORY_BYTES`): a file that needs more is skipped and the worker that ran out replaced;
  so is one that grew past `RETIRE_PEAK_BYTES` (Python keeps what it allocated: a worker
  that parsed one big PDF would hold ~250 MB while idle).

Each is skipped with its reason, which the user sees. A worker that dies (a crash, a kill, a
limit) skips the file it was on, and a new one serves the next. One worker serves file after
file (starting one costs ~70 ms, ~250 ms with pypdf): the indexer starts it with the library
and closes it after a minute with nothing to do.

The file's bytes are read by the parent (`reading.read_inside`, which is where the library's
rules on links, FIFOs and sizes live, and whose bytes the parent hashes anyway) and handed
over on the worker's stdin; the worker opens no file. Like the watcher, it ends when its stdin
closes; on Linux the kernel also kills it when Parley ends (even by kill -9) mid-file;
elsewhere it outlives Parley by at most the file it is on (bounded by its budget).

Protocol, both ways framed by lengths (network order): the parent sends `!II` (header length,
data length), a JSON header `{"kind", "cpu_s", "max_chars", "retire"}` (`retire`: the peak
memory past which the worker ends after this file) and the file's bytes; the worker answers
`!I` and a JSON object, `{"chunks": [[text, page, line_start, line_end], ...]}` or
`{"skipped": reason}`, with `"retire": true` when it must not be used again.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import subprocess
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, BinaryIO

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.buffered import BufferedByteReceiveStream

from server.errors import SkipFile
from server.library.chunking import Chunk, chunk
from server.library.parsing import parse, too_much_text
from server.limits import LibraryLimits

PARSE_CPU_S = LibraryLimits.parse_cpu  # server/limits.py
MAX_TEXT_CHARS = 20_000_000  # as many as the largest text file the library reads (20 MB)
MEMORY_BYTES = 1 << 30  # the worker's address space: pypdf needs ~250 MB on the bomb
RETIRE_PEAK_BYTES = 200 << 20  # a worker that grew past this is replaced after its file
WALL_FACTOR = 4.0  # the parent's bound: the CPU budget this many times over, plus a grace,
WALL_GRACE_S = LibraryLimits.parse_wall_grace  # server/limits.py
CPU_KILL_GRACE_S = LibraryLimits.parse_cpu_kill_grace  # server/limits.py
STOP_WAIT_S = LibraryLimits.worker_stop_wait
BIG_ANSWER = 1 << 20  # decoded in a thread, not on the event loop
_HEAD = struct.Struct("!II")
_LENGTH = struct.Struct("!I")


@dataclass(frozen=True)
class Skipped:
    """The file is not indexed: `reason` says why (shown to the user)."""

    reason: str


def over_time(cpu_s: float) -> str:
    return f"took longer than {cpu_s:g} s to parse"


class Parser:
    """The worker, started at the first file and replaced when it dies or is stopped. One
    file at a time (the indexer's). Cancelling `cut` kills the worker at once."""

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
        cpu_s, max_chars = PARSE_CPU_S, MAX_TEXT_CHARS  # read now: tests lower them
        requests, answers = await self._worker()
        header = json.dumps(
            {"kind": kind, "cpu_s": cpu_s, "max_chars": max_chars, "retire": RETIRE_PEAK_BYTES}
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
        return [Chunk(text, page, start, end) for text, page, start, end in answer["chunks"]]

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
                    "server.library.worker",
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


# -- the worker process ---------------------------------------------------------------------


class OverBudget(BaseException):
    """The file's CPU budget is spent. A BaseException: a parser's `except Exception` must not
    swallow it."""


_armed = False  # a SIGPROF that lands after the parse (the budget's edge) is ignored


def _on_timer(signum: int, frame: FrameType | None) -> None:
    if _armed:
        raise OverBudget


def _arm(cpu_s: float) -> None:
    global _armed
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime + 1)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = spent + int(cpu_s + 1) + CPU_KILL_GRACE_S
    if hard == resource.RLIM_INFINITY or soft <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    _armed = True
    signal.setitimer(signal.ITIMER_PROF, cpu_s, 0.05)  # again every 50 ms if swallowed


def _disarm() -> None:
    global _armed
    _armed = False
    signal.setitimer(signal.ITIMER_PROF, 0, 0)


def answer(kind: str, data: bytes, cpu_s: float, max_chars: int) -> dict[str, Any]:
    """What the worker says about one file."""
    timed = hasattr(signal, "setitimer") and sys.platform != "win32"
    try:
        if timed:
            _arm(cpu_s)
        try:
            sections = parse(kind, data, max_chars=max_chars)
            if sum(len(section.text) for section in sections) > max_chars:
                return {"skipped": too_much_text(max_chars)}
            chunks = chunk(sections)
        finally:
            if timed:
                _disarm()
    except OverBudget:
        return {"skipped": over_time(cpu_s)}
    except SkipFile as exc:
        return {"skipped": str(exc)}
    except MemoryError:
        raise  # answered by `main` once the parse's frames are gone (see there)
    except Exception as exc:  # a parser's own bug must not stop the indexer
        return {"skipped": f"could not be parsed ({type(exc).__name__})"}
    if not chunks:
        return {"skipped": "no text"}
    return {"chunks": [[c.text, c.page, c.line_start, c.line_end] for c in chunks]}


def _read(stream: BinaryIO, size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        part = stream.read(size)
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


_memory_cap = MEMORY_BYTES


def too_much_memory() -> str:
    return f"needed more than {_memory_cap >> 20} MB of memory to parse"


def _cap_memory(cap: int) -> None:
    global _memory_cap
    _memory_cap = cap
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard >= cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _peak_bytes() -> int:
    """This process's peak resident memory so far (0 where unknown). On Linux, the memory's
    own high-water mark (VmHWM): `ru_maxrss` keeps the parent's resident size at the fork
    across exec, so a worker of a server past `RETIRE_PEAK_BYTES` was retired after every
    file (seen when the test suite's own process had grown past it)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB on Linux


def _die_with(parent: int) -> bool:
    """Linux: the kernel kills this process when Parley ends, even by kill -9, mid-file. (It
    is tied to the thread that started it: the server's event loop, which ends only after
    the worker is stopped.) False if Parley is gone already."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    return parent == 0 or os.getppid() == parent


def main(memory: int, parent: int) -> int:
    if not _die_with(parent):
        return 0
    _cap_memory(memory)
    out_of_memory = {"skipped": too_much_memory(), "retire": True}  # made while there is room
    if hasattr(signal, "SIGPROF"):
        signal.signal(signal.SIGPROF, _on_timer)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while (head := _read(requests, _HEAD.size)) is not None:
        header_size, data_size = _HEAD.unpack(head)
        header = _read(requests, header_size)
        data = _read(requests, data_size)
        if header is None or data is None:
            return 0
        request = json.loads(header)
        try:
            said = answer(request["kind"], data, request["cpu_s"], request["max_chars"])
        except MemoryError:
            # Nothing is allocated here: the error's traceback still holds the parse's
            # frames and their memory, and building an answer could raise again (it did
            # under a tracer, and the worker died with "exit 1"). They go when this ends.
            said = out_of_memory
        del data
        if _peak_bytes() > request["retire"]:
            said["retire"] = True  # its memory back to the system: the next file gets a new one
        try:
            raw = json.dumps(said).encode()
        except MemoryError:
            said = out_of_memory
            raw = json.dumps(said).encode()
        try:
            answers.write(_LENGTH.pack(len(raw)) + raw)
            answers.flush()
        except BrokenPipeError:  # Parley is gone
            return 0
        if said.get("retire"):
            return 0
    return 0  # stdin closed: Parley is done with it (or gone)


if __name__ == "__main__":
    arguments = [int(argument) for argument in sys.argv[1:3]]
    sys.exit(main(*arguments) if len(arguments) == 2 else main(MEMORY_BYTES, 0))
