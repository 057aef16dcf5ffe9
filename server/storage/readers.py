"""Reads of the database on connections and threads of their own.

The writer's one thread (server/storage/db.py) is where a streaming reply's checkpoints wait; a read
of a 100,000-message chat there took ~1 s, and the reply went that long unsaved. Under WAL a
reader never waits on the writer nor the writer on it, so reads that may be big — a chat, a
page of it, an export, the list, a search — run here: each in one read transaction (one
snapshot of the file), on one of `READERS` threads, each with its connection
(`query_only`: nothing here can write). What the route sends is encoded to bytes here too, so
the event loop only hands them over.

`stream` (an export) runs a generator of bytes on a thread and connection of its own, so a
client that reads slowly never holds the readers the window needs, and hands its pieces to
the event loop a few at a time (the generator waits while the client is slower); a client
that goes away stops it at its next piece.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from server.errors import StorageError
from server.limits import TransferLimits
from server.storage.db import storage_error

T = TypeVar("T")

READERS = 2  # threads (and connections): a chat opened while an export of all runs
GIVE_UP_S = TransferLimits.reader_give_up  # server/limits.py
STOP_POLL_S = TransferLimits.reader_stop_poll  # server/limits.py


def json_bytes(value: Any) -> bytes:
    """As Starlette's JSONResponse encodes (compact, UTF-8, no NaN)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class Readers:
    def __init__(self, path: Path, *, busy_timeout: float) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(
            READERS, thread_name_prefix="parley-read"
        )
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._streams = asyncio.Semaphore(TransferLimits.export_streams)
        self.streaming = 0  # streams whose thread still runs

    def _open(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise StorageError("the database is closed")
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={round(self._busy_timeout * 1000)}")
        conn.execute("PRAGMA query_only=ON")
        return conn

    def _connection(self) -> sqlite3.Connection:
        """This reader thread's connection (opened at its first read)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            with self._lock:
                self._opened.append(conn)
            self._local.conn = conn
        return conn

    @staticmethod
    def _in_transaction(conn: sqlite3.Connection, fn: Callable[..., T], *args: object) -> T:
        try:
            conn.execute("BEGIN")
            try:
                return fn(conn, *args)
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise storage_error(exc) from exc

    def _call(self, fn: Callable[..., T], *args: object) -> T:  # on a reader thread
        return self._in_transaction(self._connection(), fn, *args)

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(conn, *args)` in one read transaction on a reader thread. Raises StorageError."""
        return await asyncio.wrap_future(self._pool.submit(self._call, fn, *args))

    async def stream(
        self, pieces: Callable[..., Iterator[bytes]], *args: object
    ) -> AsyncIterator[bytes]:
        """The bytes `pieces(conn, *args)` yields, as they come (see the module). Each stream
        has a thread and a connection of its own, so a client that reads slowly (or not at
        all) never holds the readers the window's reads need; at most
        `TransferLimits.export_streams` at once."""
        async with self._streams:
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
            room = threading.Semaphore(TransferLimits.export_ahead)
            stopped = threading.Event()
            done = loop.create_future()

            def hand(item: bytes | BaseException | None) -> None:
                loop.call_soon_threadsafe(queue.put_nowait, item)

            def produce(conn: sqlite3.Connection) -> None:
                for piece in pieces(conn, *args):
                    waited = 0.0
                    while not room.acquire(timeout=STOP_POLL_S):
                        waited += STOP_POLL_S
                        if stopped.is_set() or waited > GIVE_UP_S:
                            return
                    if stopped.is_set():
                        return
                    hand(piece)

            def run() -> None:
                try:
                    conn = self._open()
                    try:
                        self._in_transaction(conn, produce)
                    finally:
                        conn.close()
                except BaseException as exc:  # handed to the loop, raised there
                    hand(exc)
                else:
                    hand(None)
                finally:
                    with self._lock:
                        self.streaming -= 1
                    loop.call_soon_threadsafe(_resolve, done)

            with self._lock:
                self.streaming += 1
            threading.Thread(target=run, name="parley-export", daemon=True).start()
            try:
                while True:
                    item = await queue.get()
                    if item is None:
                        break
                    if isinstance(item, BaseException):
                        raise item
                    room.release()
                    yield item
            finally:
                stopped.set()
                await asyncio.shield(done)

    def close(self) -> None:
        """After the last read: the pool's threads end, then their connections close."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True)
        with self._lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
