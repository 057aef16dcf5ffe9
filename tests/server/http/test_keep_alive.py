"""Kept-alive connections answer at once: no Nagle / delayed-ACK wait per request (issue 19:
44 ms per request before; ~1-3 ms since)."""

from __future__ import annotations

import socket
import statistics
import time

import httpx

from server.serve import bind
from tests.support.parley import Parley

# Nagle and a delayed ACK cost ~40 ms a request here; answered at once it is ~1-3 ms.
KEPT_ALIVE_BOUND_MS = 20.0


def test_the_listening_socket_is_tcp_so_connections_get_nodelay() -> None:
    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only then
    finally:
        sock.close()


def test_requests_on_a_kept_alive_connection_are_not_delayed(parley: Parley) -> None:
    headers = {"Authorization": f"Bearer {parley.token}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{parley.port}", headers=headers) as client:
        client.get("/api/status").raise_for_status()  # the connection is open from here
        took = []
        for _ in range(15):
            started = time.perf_counter()
            client.get("/api/status").raise_for_status()
            took.append((time.perf_counter() - started) * 1000)
    assert statistics.median(took) < KEPT_ALIVE_BOUND_MS, took
