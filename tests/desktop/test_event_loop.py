"""The window's event loop (desktop/event_loop.py) on real sockets: every byte arrives, in
order; callbacks run in the order they were scheduled; a socket's notifier is kept, not made
again for every read."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from typing import Any

import pytest
from PySide6.QtCore import QSocketNotifier
from pytestqt.qtbot import QtBot

from desktop import event_loop
from desktop.event_loop import WindowEventLoop
from tests.desktop.conftest import run


def test_callbacks_run_in_the_order_they_were_scheduled_and_cancelled_ones_never(
    qt_loop: WindowEventLoop, qtbot: QtBot
) -> None:
    ran: list[str] = []
    done = asyncio.Event()

    def chain(name: str) -> None:
        ran.append(name)
        if name == "b":  # scheduled while the queue runs: after what was already queued
            qt_loop.call_soon(chain, "d")
        if name == "d":
            done.set()

    qt_loop.call_soon(chain, "a")
    qt_loop.call_soon(chain, "b")
    qt_loop.call_soon(chain, "x").cancel()
    qt_loop.call_soon(chain, "c")
    run(qtbot, done.wait())
    assert ran == ["a", "b", "c", "d"]


def test_a_callback_from_another_thread_runs_on_the_loop(
    qt_loop: WindowEventLoop, qtbot: QtBot
) -> None:
    future: asyncio.Future[int] = qt_loop.create_future()
    main = threading.get_ident()

    def from_thread() -> None:
        qt_loop.call_soon_threadsafe(lambda: future.set_result(threading.get_ident()))

    threading.Thread(target=from_thread).start()
    assert run(qtbot, asyncio.wait_for(future, 10)) == main


def test_a_stream_of_small_writes_arrives_whole_through_one_kept_notifier(
    qt_loop: WindowEventLoop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A peer that writes 2,000 small pieces with pauses, as a reply's stream does; the reader
    # stops and starts reading after every read, as AnyIO (under httpx) does. Every byte
    # arrives in order, and no notifier is made per read.
    made: list[int] = []

    class CountedNotifier(QSocketNotifier):
        def __init__(self, fd: int, kind: QSocketNotifier.Type) -> None:
            super().__init__(fd, kind)
            made.append(fd)

    monkeypatch.setattr(event_loop, "QSocketNotifier", CountedNotifier)
    pieces = [f"piece {i:04d}\n".encode() for i in range(2000)]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def peer() -> None:
        conn, _ = listener.accept()
        with conn:
            for i, piece in enumerate(pieces):
                conn.sendall(piece)
                if i % 50 == 0:
                    threading.Event().wait(0.002)

    threading.Thread(target=peer, daemon=True).start()

    async def read_all() -> tuple[bytes, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        transport: Any = writer.transport
        reads = 0
        received = b""
        while chunk := await reader.read(64):
            received += chunk
            reads += 1
            transport.pause_reading()
            transport.resume_reading()
        writer.close()
        await writer.wait_closed()
        return received, reads

    try:
        received, reads = run(qtbot, read_all())
    finally:
        listener.close()
    assert received == b"".join(pieces)
    assert reads > 50
    assert len(made) <= 2  # the socket's reader and writer at most, however many reads


def test_a_reused_descriptor_number_is_watched_for_its_new_socket(
    qt_loop: WindowEventLoop, qtbot: QtBot
) -> None:
    # A closed socket's number goes to the next file opened; the notifier kept for that
    # number must serve the new socket. (dup2 puts the new socket on the old number at
    # once: no moment where another thread could take the number.)
    old, old_peer = socket.socketpair()
    new, new_peer = socket.socketpair()
    number = old.fileno()
    got: list[bytes] = []
    try:
        old_peer.send(b"first")
        qt_loop._add_reader(number, lambda: got.append(os.read(number, 100)))
        qtbot.waitUntil(lambda: got == [b"first"], timeout=5000)
        qt_loop._remove_reader(number)  # as asyncio does before it closes a socket
        os.dup2(new.fileno(), number)  # the old socket closed; its number is the new one's
        qt_loop._add_reader(number, lambda: got.append(os.read(number, 100)))
        new_peer.send(b"second")
        qtbot.waitUntil(lambda: got == [b"first", b"second"], timeout=5000)
    finally:
        qt_loop._remove_reader(number)
        for sock in (old, old_peer, new, new_peer):
            sock.close()


def test_a_removed_reader_is_not_called_even_if_it_was_already_ready(
    qt_loop: WindowEventLoop, qtbot: QtBot
) -> None:
    left, right = socket.socketpair()
    calls: list[bytes] = []

    def on_readable() -> None:
        calls.append(left.recv(1))

    try:
        right.send(b"x")
        qt_loop._add_reader(left.fileno(), on_readable)
        qtbot.waitUntil(lambda: calls == [b"x"], timeout=5000)
        right.send(b"y")
        qtbot.waitUntil(lambda: calls == [b"x", b"y"], timeout=5000)
        # Ready again while a callback queued before it removes it: its turn comes after
        # that callback's, and it is not called.
        right.send(b"z")
        qt_loop.call_soon(qt_loop._remove_reader, left.fileno())
        qt_loop._readers[left.fileno()]._on_notifier_activated()  # what Qt calls
        # A callback queued after both: once it has run, so have they.
        barrier = qt_loop.create_future()
        qt_loop.call_soon(barrier.set_result, None)
        run(qtbot, barrier)
        assert calls == [b"x", b"y"]
    finally:
        qt_loop._remove_reader(left.fileno())
        left.close()
        right.close()
