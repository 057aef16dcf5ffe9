"""Test clients over real sockets: plain JSON calls, and an SSE stream that can hang up.

Hanging up is `socket.shutdown()` + `close()` on the real connection: the server sees the
disconnect exactly as it would when a GUI presses Stop or a tool dies.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from server.types.sse import EventSplitter


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    port: int,
    method: str,
    path: str,
    *,
    token: str | None = None,
    json_body: Any = None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> Reply:
    """One request on its own connection, always closed. `timeout` bounds the connect and each
    read: generous, since a loaded machine (a model loading, other processes busy) answers late,
    and a test that hangs is ended by its own per-test timeout anyway."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    all_headers = {"Host": f"127.0.0.1:{port}"}
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    if json_body is not None:
        body = json.dumps(json_body).encode()
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    try:
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        conn.close()


# Streams not yet closed: a test that fails half-way leaves its stream open, and a socket
# closed only by the garbage collector warns (an error here) in whichever test runs then.
# tests/conftest.py closes the leftovers when each test ends.
OPEN_STREAMS: list[SSEStream] = []


def close_open_streams() -> None:
    while OPEN_STREAMS:
        OPEN_STREAMS[-1].close()


@dataclass(eq=False)
class SSEStream:
    """POST that answers with text/event-stream; read events; hang up at will.

    `timeout` bounds the connect and each read: a first reply from a model that is still
    loading, on a loaded machine, may take tens of seconds."""

    port: int
    path: str
    payload: Any
    token: str
    timeout: float = 60.0
    status: int = 0
    events: list[Any] = field(default_factory=list)
    hung_up_at: float | None = None

    def __post_init__(self) -> None:
        self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        self._response: http.client.HTTPResponse | None = None
        self._splitter = EventSplitter()  # the server's own: events split as it splits them
        self._ready: deque[bytes] = deque()  # events read, not yet handed out
        self._ended = False  # the body ended (its last events may still be in `_ready`)
        OPEN_STREAMS.append(self)
        try:
            self._conn.request(
                "POST",
                self.path,
                body=json.dumps(self.payload).encode(),
                headers={
                    "Host": f"127.0.0.1:{self.port}",
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/json",
                },
            )
            self._response = self._conn.getresponse()
        except BaseException:
            self.close()  # a refused or timed-out request leaks no socket
            raise
        self.status = self._response.status
        self.done = False

    @property
    def first(self) -> dict[str, Any]:
        if not self.events:
            self.next_event()
        first: dict[str, Any] = self.events[0]
        return first

    def next_event(self) -> Any:
        """The next event's data (a dict, or the string "[DONE]"); None at end of stream."""
        assert self._response is not None
        while not self._ready:
            if self._ended:
                self.done = True
                self.close()
                return None
            try:
                piece = self._response.read1(65536)
            except BaseException:
                self.close()  # a timed-out read fails this test only, and leaks no socket
                raise
            if piece:
                self._ready.extend(self._splitter.feed(piece))
            else:
                self._ended = True
                self._ready.extend(self._splitter.end())
        data = self._ready.popleft().decode()
        event = data if data == "[DONE]" else json.loads(data)
        self.events.append(event)
        if event == "[DONE]":
            self.done = True
            self.close()
        return event

    def iter_events(self) -> Iterator[Any]:
        while not self.done:
            event = self.next_event()
            if event is None:
                return
            yield event

    @property
    def delivered(self) -> str:
        """All content the client has received so far."""
        return "".join(
            choice["delta"].get("content") or ""
            for event in self.events
            if isinstance(event, dict)
            for choice in event.get("choices", [])
        )

    @property
    def final(self) -> dict[str, Any]:
        chunks = [e for e in self.events if isinstance(e, dict) and "status" in e.get("parley", {})]
        assert chunks, "no final chunk received"
        return chunks[-1]

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The tool steps' events received (`parley.step`), in order."""
        return [
            e["parley"]["step"]
            for e in self.events
            if isinstance(e, dict) and "step" in e.get("parley", {})
        ]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls received as `delta.tool_calls`, in order."""
        return [
            call
            for e in self.events
            if isinstance(e, dict)
            for choice in e.get("choices", [])
            for call in choice["delta"].get("tool_calls", [])
        ]

    def read_until(self, predicate: Any) -> str:
        """Read events until `predicate(delivered_text)` holds; return the delivered text."""
        while not predicate(self.delivered):
            if self.next_event() is None or self.done:
                raise AssertionError(f"stream ended first; delivered {self.delivered!r}")
        return self.delivered

    def read_all(self) -> list[Any]:
        for _ in self.iter_events():
            pass
        return self.events

    def hang_up(self) -> float:
        sock = self._conn.sock
        self.hung_up_at = time.perf_counter()
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.close()
        return self.hung_up_at

    def close(self) -> None:
        if self._response is not None:
            self._response.close()
        self._conn.close()
        if self in OPEN_STREAMS:
            OPEN_STREAMS.remove(self)


def raw_exchange(port: int, data: bytes, timeout: float = 5.0) -> tuple[int, bytes]:
    """Send raw bytes (what an HTTP client would refuse to send); return (status, body).

    The request should say `Connection: close` (or be HTTP/1.0): this reads until the server
    closes. It does not half-close its side, which a server may take for a hang-up.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while True:
            try:
                piece = sock.recv(65536)
            except ConnectionResetError:
                break
            if not piece:
                break
            received += piece
    if not received:
        return 0, b""
    head, _, body = received.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, body


def outcome(final: dict[str, Any]) -> tuple[str, str | None]:
    """A final chunk's (status, ended_by): what Parley saved (its `parley.ended` aside)."""
    parley = final["parley"]
    return parley["status"], parley["ended_by"]
