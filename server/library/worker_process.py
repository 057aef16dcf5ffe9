"""The parse worker's own side (started by server/library/worker.py, whose docstring says
why and how): it reads a file's bytes from stdin, parses it within its CPU and memory
budgets, and writes what it found or why it skipped it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import sys
from types import FrameType
from typing import Any, BinaryIO

from server.errors import SkipFile
from server.library.chunking import chunk
from server.library.parsing import parse, too_much_text
from server.limits import LibraryLimits

MEMORY_BYTES = LibraryLimits.parse_memory_bytes  # server/limits.py
CPU_KILL_GRACE_S = LibraryLimits.parse_cpu_kill_grace  # server/limits.py
HEAD = struct.Struct("!II")
LENGTH = struct.Struct("!I")


def over_time(cpu_s: float) -> str:
    return f"took longer than {cpu_s:g} s to parse"


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


def answer(
    kind: str, data: bytes, cpu_s: float, max_chars: int, whole: bool = False
) -> dict[str, Any]:
    """What the worker says about one file: its passages, or (`whole`) its text."""
    timed = hasattr(signal, "setitimer") and sys.platform != "win32"
    try:
        if timed:
            _arm(cpu_s)
        try:
            sections = parse(kind, data, max_chars=max_chars)
            if sum(len(section.text) for section in sections) > max_chars:
                return {"skipped": too_much_text(max_chars)}
            if whole:
                return {"text": "\n\n".join(section.text for section in sections)}
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
    across exec, so a worker of a server past `LibraryLimits.worker_retire_bytes` was retired
    after every file (seen when the test suite's own process had grown past it)."""
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
    while (head := _read(requests, HEAD.size)) is not None:
        header_size, data_size = HEAD.unpack(head)
        header = _read(requests, header_size)
        data = _read(requests, data_size)
        if header is None or data is None:
            return 0
        request = json.loads(header)
        try:
            said = answer(
                request["kind"], data, request["cpu_s"], request["max_chars"], request["whole"]
            )
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
            answers.write(LENGTH.pack(len(raw)) + raw)
            answers.flush()
        except BrokenPipeError:  # Parley is gone
            return 0
        if said.get("retire"):
            return 0
    return 0  # stdin closed: Parley is done with it (or gone)


if __name__ == "__main__":
    arguments = [int(argument) for argument in sys.argv[1:3]]
    sys.exit(main(*arguments) if len(arguments) == 2 else main(MEMORY_BYTES, 0))
