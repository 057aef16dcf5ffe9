"""The status as a stream of changes (GET /api/status/stream): the whole status at once, then
each change, on a real socket; a client that hangs up ends it."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from server.settings import Limits
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import wait_for


class StatusEvents:
    def __init__(self, parley: Parley) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", parley.port, timeout=60)
        self.conn.request(
            "GET",
            "/api/status/stream",
            headers={"Host": f"127.0.0.1:{parley.port}", "Authorization": f"Bearer {parley.token}"},
        )
        self.response = self.conn.getresponse()

    def next(self) -> dict[str, Any]:
        """The next status the server sends (comments skipped)."""
        while True:
            line = self.response.readline()
            if not line:
                raise AssertionError("the stream ended")
            if line.startswith(b"data: "):
                event: dict[str, Any] = json.loads(line[6:])
                return event

    def until(self, holds: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            event = self.next()
            if holds(event):
                return event

    def hang_up(self) -> None:
        sock = self.conn.sock
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.conn.close()


@contextmanager
def status_events(parley: Parley) -> Iterator[StatusEvents]:
    events = StatusEvents(parley)
    try:
        yield events
    finally:
        events.hang_up()


def test_the_status_comes_whole_then_again_as_it_changes(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    with status_events(parley) as events:
        assert events.response.status == 200
        assert events.response.getheader("Content-Type", "").startswith("text/event-stream")
        first = events.next()
        assert first["active_turns"] == 0 and first["default_model"] == "scripted"
        upstream.script = Script(tokens=100, stall_after=2)  # a reply that stays under way
        conversation_id = parley.new_conversation()
        reply = parley.send(conversation_id)
        reply.read_until(lambda text: len(text) > 0)
        events.until(lambda status: status["active_turns"] == 1)
        reply.hang_up()
        events.until(lambda status: status["active_turns"] == 0)


def test_the_stream_asks_for_the_token(parley: Parley) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", parley.port, timeout=30)
    try:
        conn.request("GET", "/api/status/stream", headers={"Host": f"127.0.0.1:{parley.port}"})
        assert conn.getresponse().status == 401
    finally:
        conn.close()


def test_a_stream_the_client_hung_up_ends_on_the_server(parley: Parley) -> None:
    state = parley.server.server.server_state  # uvicorn's: its connections and their tasks
    for _ in range(5):
        with status_events(parley) as events:
            events.next()
            assert len(state.tasks) >= 1  # the stream's request, under way
    wait_for(lambda: not state.tasks and not state.connections, timeout=30)


def test_an_open_stream_does_not_hold_the_servers_stop(tmp_path: Path) -> None:
    """uvicorn waits for open responses at a stop without telling them to end: a window that
    follows the status would hold every stop until uvicorn's backstop (here 30 s)."""
    limits = Limits(graceful_shutdown=30.0, server_stop_wait=40.0)
    parley = Parley(tmp_path, limits=limits).start()
    events = StatusEvents(parley)
    try:
        events.next()
        started = time.monotonic()
        assert parley.stop()
        assert time.monotonic() - started < 10.0  # the backstop would take 30 s
        # The stream ended as a response ends (a cut one raises IncompleteRead here).
        assert b"data:" not in events.response.read()
    finally:
        events.hang_up()
