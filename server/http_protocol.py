"""uvicorn's h11 protocol with a deadline for a request's line and headers.

uvicorn closes idle keep-alive connections, but a client that trickles a request's headers a
byte at a time keeps its connection (and a file descriptor) forever: it never reaches the app,
so no app-level timeout can see it. This protocol arms a timer when a connection opens and
whenever the next request begins arriving; if the headers are not complete when it fires, the
client gets a 408 and the connection is closed. Bodies have their own deadline (jsonbody).
"""

from __future__ import annotations

import asyncio
import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.errors import RequestTimeoutError


def _timeout_response() -> bytes:
    error = RequestTimeoutError("the request's headers were not sent in time")
    body = json.dumps(error.to_json()).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class HeaderDeadlineProtocol(H11Protocol):
    """H11Protocol; subclasses set `header_timeout` (see `with_header_deadline`)."""

    header_timeout = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection: a fresh deadline
        else:
            self._disarm()  # its headers are in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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


def with_header_deadline(seconds: float) -> type[HeaderDeadlineProtocol]:
    return type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout": seconds})
