"""An MCP server over stdio, as a child process Parley owns.

Parley runs its own small transport rather than the SDK's `stdio_client` (which it mirrors:
newline-delimited JSON-RPC, the server in a new process group) because it needs what that
one keeps private: the process itself, to know at once when it exits, to read its stderr
into a tail the user sees, to stop it within a bound Parley chooses, and to end the whole
process group after it exits (the SDK signals the group only when the server outlives its
grace period: a server that exits by itself can leave its children running; see
docs/research/mcp-sdk.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from server.limits import StopTimes, ToolLimits
from server.text import valid_unicode

log = logging.getLogger(__name__)

# What a server inherits from Parley's environment (the SDK's own list): nothing else, so
# Parley's API token and keys never reach it. Its entry's `env` is added to these.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
EXIT_POLL_S = ToolLimits.exit_poll


@dataclass
class StdioConnection:
    read: MemoryObjectReceiveStream[SessionMessage | Exception]
    write: MemoryObjectSendStream[SessionMessage]
    closed: anyio.Event  # the server exited, or closed its stdout
    process: anyio.abc.Process

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode


def server_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    return env | extra


@contextlib.asynccontextmanager
async def stdio_server(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    on_stderr: Callable[[str], None],
    stop_times: StopTimes | None = None,
) -> AsyncIterator[StdioConnection]:
    """Start the server; yield its streams; on exit stop it (bounded) and its group.

    Raises OSError when it cannot be started (command not found, not executable...)."""
    times = stop_times or StopTimes()
    process = await anyio.open_process(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_environment(env),
        cwd=cwd,
        start_new_session=True,  # its own process group: stopped as a whole
    )
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    closed = anyio.Event()

    async def read_stdout() -> None:
        assert process.stdout is not None
        pending: list[bytes] = []  # the line being received, in pieces (a long one is cheap)
        size = 0
        try:
            async with to_session:
                async for received in process.stdout:
                    if b"\n" not in received:
                        pending.append(received)
                        size += len(received)
                        if size > ToolLimits.line_bytes:
                            most = ToolLimits.line_bytes
                            on_stderr(f"[parley] the server wrote a line over {most} bytes")
                            break
                        continue
                    pieces = received.split(b"\n")
                    pieces[0] = b"".join([*pending, pieces[0]])
                    *lines, last = pieces
                    pending, size = [last], len(last)
                    for line in lines:
                        if line.strip():
                            await to_session.send(_message(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            closed.set()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            closed.set()

    async def read_stderr() -> None:
        assert process.stderr is not None
        pending = b""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for received in process.stderr:
                *lines, pending = (pending + received).split(b"\n")
                pending = pending[-4096:]  # a line without end is kept short
                for line in lines:
                    on_stderr(line.decode("utf-8", "replace").rstrip())
        if pending:
            on_stderr(pending.decode("utf-8", "replace").rstrip())

    async def watch_exit() -> None:
        # Polled: waiting on the process would also wait for its pipes, which a child
        # of the server may hold open after the server itself has exited.
        while process.returncode is None:  # noqa: ASYNC110 (no event tells an exit)
            await anyio.sleep(EXIT_POLL_S)
        closed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        tg.start_soon(read_stderr)
        tg.start_soon(watch_exit)
        try:
            yield StdioConnection(read, write, closed, process)
        finally:
            # Shielded: stopping the server must finish whatever cancelled us; each wait
            # in it is bounded by `times`.
            with anyio.CancelScope(shield=True):
                await _stop(process, write, times)
            tg.cancel_scope.cancel()


def _message(line: bytes) -> SessionMessage | Exception:
    adapter = mcp_types.jsonrpc_message_adapter
    try:
        return SessionMessage(adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        # Valid JSON that the SDK's parser refuses: half a surrogate pair (\ud83d), as a
        # server whose strings are UTF-16 writes when it cuts one mid-emoji. Mended (U+FFFD),
        # its answer is taken: refused, the call it answers would wait out its time limit.
        try:
            mended = _mended(json.loads(line))
            return SessionMessage(adapter.validate_python(mended, by_name=False))
        except ValueError:
            return exc  # the session reports it; the connection goes on


def _mended(value: Any) -> Any:
    """`value` (parsed JSON) with every string as storage and clients take it."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {valid_unicode(key): _mended(item) for key, item in value.items()}
    return value


async def _stop(
    process: anyio.abc.Process, write: MemoryObjectSendStream[SessionMessage], times: StopTimes
) -> None:
    """Close its stdin (MCP's way to ask a stdio server to exit), then SIGTERM and SIGKILL
    its process group if it does not; then end whatever is left of the group."""
    write.close()
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for sig, wait in (
        (None, times.grace),
        (signal.SIGTERM, times.terminate),
        (signal.SIGKILL, 2.0),
    ):
        if sig is not None:
            _signal_group(process.pid, sig)
        with anyio.move_on_after(wait):
            while process.returncode is None:  # noqa: ASYNC110 (no event tells an exit)
                await anyio.sleep(EXIT_POLL_S)
        if process.returncode is not None:
            break
    else:
        log.error("MCP server process %d survived SIGKILL", process.pid)
    # The server is gone; its children in the group (started by it, still running) too:
    # asked, then made to.
    if _signal_group(process.pid, signal.SIGTERM):
        with anyio.move_on_after(times.terminate):
            while _signal_group(process.pid, 0):  # noqa: ASYNC110 (no event tells an exit)
                await anyio.sleep(EXIT_POLL_S)
        _signal_group(process.pid, signal.SIGKILL)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the process group; False if there is no such group any more."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
