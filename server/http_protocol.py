"""uvicorn's h11 protocol with deadlines for clients that never finish sending.

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
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.error_response import ErrorResponse
from server.errors import RequestTimeoutError


def _timeout_response() -> bytes:
    error = RequestTimeoutError("the request's headers were not sent in time")
    return ErrorResponse(error, close=True).http_bytes()


DRAIN_GRACE_S = 1.0


class HeaderDeadlineProtocol(H11Protocol):
    """H11Protocol; subclasses set `header_timeout` (see `with_header_deadline`)."""

    header_timeout = 10.0
    _header_timer: asyncio.TimerHandle | None = None
    _drain_timer: asyncio.TimerHandle | None = None

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
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        answered_early = self.conn.their_state is h11.SEND_BODY
        if answered_early and not self.transport.is_closing() and self._drain_timer is None:
            self._drain_timer = self.loop.call_later(DRAIN_GRACE_S, self._on_drain_deadline)

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


def with_header_deadline(seconds: float) -> type[HeaderDeadlineProtocol]:
    """The protocol class for uvicorn's `http=` option, with this header deadline."""
    return type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,), {"header_timeout": seconds})
