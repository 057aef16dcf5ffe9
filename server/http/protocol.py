"""uvicorn's h11 protocol with deadlines for clients that never finish sending, or never read.

uvicorn closes idle keep-alive connections, but a client that trickles a request's headers a
byte at a time keeps its connection (and a file descriptor) forever: it never reaches the app,
so no app-level timeout can see it. This protocol arms a timer when a connection opens and
whenever the next request begins arriving; if the headers are not complete when it fires, the
client gets a 408 and the connection is closed.

A body has its own deadline in the app (jsonbody: 408). But once any response is complete
while the client is still sending its body (that 408, a 413, a refused token), uvicorn only
arms its keep-alive timer, which the next incoming byte cancels, and discards the rest of the
body: a client trickling bytes keeps the connection. So such a connection is closed after a
short grace (the client can read the answer meanwhile).

The other way round, a client that stops reading: once the socket's buffers are full, asyncio
pauses writing and uvicorn's `send` waits for it to resume, forever if the client never
reads. Memory stays bounded (a reply is sent in bounded pieces; the run keeps the one copy of
the text), but the connection and the run it follows would be kept for ever. So while
writing is paused a send deadline runs; if the client has read nothing when it fires (nothing
left asyncio's buffer or the kernel's), the connection is aborted; if it read some, the
deadline starts again. uvicorn then reports `http.disconnect` to the app, and the response
takes the hang-up path like any client that hangs up (the run is stopped and saved).
"""

from __future__ import annotations

import asyncio
import socket
import struct

try:
    import fcntl
    import termios
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.errors import RequestTimeoutError
from server.http.error_response import ErrorResponse
from server.limits import Limits


def _timeout_response() -> bytes:
    error = RequestTimeoutError("the request's headers were not sent in time")
    return ErrorResponse(error, close=True).http_bytes()


SEND_BUFFER_BYTES = 131_072  # Linux doubles it for its bookkeeping


class DeadlineProtocol(H11Protocol):
    """H11Protocol; subclasses set the deadlines (see `with_deadlines`)."""

    header_timeout = Limits.header_timeout
    send_timeout = Limits.send_timeout
    drain_grace = Limits.drain_grace
    _header_timer: asyncio.TimerHandle | None = None
    _drain_timer: asyncio.TimerHandle | None = None
    _send_timer: asyncio.TimerHandle | None = None
    _unsent_at_arming: tuple[int, int | None] = (0, None)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # A fixed kernel send buffer: loopback needs no more, and a client that stops
            # reading then fills it (and meets the send deadline) after 256 KB, not 4 MB.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection: a fresh deadline
        else:
            self._disarm()  # its headers are in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        for timer in (self._drain_timer, self._send_timer):
            if timer is not None:
                timer.cancel()
        self._drain_timer = self._send_timer = None
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._arm_send_deadline()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _arm_send_deadline(self) -> None:
        self._unsent_at_arming = self._unsent()
        self._send_timer = self.loop.call_later(self.send_timeout, self._on_send_deadline)

    def _on_send_deadline(self) -> None:
        self._send_timer = None
        if not self.transport.get_write_buffer_size():
            return  # all of it went (a closing transport has closed meanwhile)
        if self._unsent() != self._unsent_at_arming:
            # Still paused, but the client did read: the kernel only asks for more once
            # much of its buffer has gone, which a slow reader takes a while to do.
            self._arm_send_deadline()
            return
        self.transport.abort()  # it read nothing for send_timeout seconds

    def _unsent(self) -> tuple[int, int | None]:
        """What waits to be sent: in asyncio's buffer, and in the kernel's (where the OS says)."""
        return self.transport.get_write_buffer_size(), _kernel_unsent(self.transport)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._send_timer is None and self.transport.get_write_buffer_size():
            self._arm_send_deadline()  # its end still waits in the buffer
        answered_early = self.conn.their_state is h11.SEND_BODY
        if answered_early and not self.transport.is_closing() and self._drain_timer is None:
            self._drain_timer = self.loop.call_later(self.drain_grace, self._on_drain_deadline)

    def _on_drain_deadline(self) -> None:
        self._drain_timer = None
        # Still the request that was answered before its body ended: close.
        if self.conn.their_state is h11.SEND_BODY and self.conn.our_state is h11.DONE:
            self.transport.close()

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._on_deadline)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _on_deadline(self) -> None:
        self._header_timer = None
        # Still waiting for a request's headers, and no response of ours under way.
        waiting = self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE
        if waiting and not self.transport.is_closing():
            self.transport.write(_timeout_response())
            self.transport.close()


def _kernel_unsent(transport: asyncio.BaseTransport) -> int | None:
    """Bytes in the socket's send queue, not yet acknowledged by the client (Linux: SIOCOUTQ;
    None where the OS does not say)."""
    if fcntl is None or not hasattr(termios, "TIOCOUTQ"):
        return None
    sock = transport.get_extra_info("socket")
    if sock is None:
        return None
    try:
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4)
    except OSError:
        return None
    return int(struct.unpack("i", raw)[0])


def with_deadlines(limits: Limits) -> type[DeadlineProtocol]:
    """The protocol class for uvicorn's `http=` option, with the server's deadlines."""
    deadlines = {
        "header_timeout": limits.header_timeout,
        "send_timeout": limits.send_timeout,
        "drain_grace": limits.drain_grace,
    }
    return type("DeadlineProtocol", (DeadlineProtocol,), deadlines)
