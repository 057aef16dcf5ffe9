"""The window's asyncio loop: qasync's, with the wake-ups of a streaming reply made cheap.

A reply reaches the window as a stream of socket reads, and qasync spends more on each read
than the read itself (a profile of max-rate replies, bench/desktop.py):

- AnyIO, under httpx, asks the loop to watch the socket before each read and to stop after it.
  qasync makes a new QSocketNotifier and connects a new lambda to it every time, and drops it
  after: 360-470 notifiers for a 6,000-token reply.
- Every `call_soon` (each task step, each future's callback) starts a Qt timer of its own, and
  a readable socket is read from a callback of its own: each is a separate entry from Qt into
  Python, and so one more wait for the GIL, which the embedded server's thread may hold (the
  window's stalls while it relays): 1,190-1,560 entries for that reply.

So this loop keeps one notifier per file descriptor for as long as the loop lives, and only
enables and disables it. A readable socket is read at once, in the entry that reported it,
and the callbacks that are ready run together, in the order they were scheduled; those they
schedule run on in the same entry for up to `RUN_S`, then Qt's own events get their turn.
Measured: one notifier and 780-860 entries for that reply, and 8-15 % less of the GUI
thread's CPU time (median per run) in 34 of 42 paired replies with a competing process
(docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import qasync
from PySide6.QtCore import QSocketNotifier, QTimer

# How long one entry from Qt may go on running callbacks scheduled while it runs, before Qt's
# own events (a paint, a key) get their turn: a small part of a 16 ms frame.
RUN_S = 0.002


def _number(fd: Any) -> int:
    """A file descriptor's number, from the number or from an object with `fileno()`."""
    return fd if isinstance(fd, int) else int(fd.fileno())


class _Watch:
    """One file descriptor's notifier of one kind, enabled while asyncio wants its events.

    The descriptor's number may be reused by a new socket once the old one is closed; the
    notifier watches the number, so it serves the new one as well."""

    def __init__(self, loop: WindowEventLoop, fd: int, kind: QSocketNotifier.Type) -> None:
        self._loop = loop
        self.notifier = QSocketNotifier(fd, kind)
        self.notifier.setEnabled(False)
        self.notifier.activated.connect(self._on_notifier_activated)
        self._callback: Callable[..., object] | None = None
        self._args: tuple[Any, ...] = ()
        self._generation = 0  # which arming a pending run belongs to

    def arm(self, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self._callback, self._args = callback, args
        self._generation += 1
        self.notifier.setEnabled(True)

    def disarm(self) -> bool:
        """Stop watching; True if it was being watched."""
        armed = self._callback is not None
        self._callback, self._args = None, ()
        self._generation += 1
        self.notifier.setEnabled(False)
        return armed

    def _on_notifier_activated(self, *_: object) -> None:
        # Off until the callback has run (as qasync does): Qt would report the same readiness
        # again on every pass of its loop until asyncio reads.
        self.notifier.setEnabled(False)
        self._loop.run_now(self._run, self._generation)

    def _run(self, generation: int) -> None:
        if generation != self._generation or self._callback is None:
            return  # removed, or replaced by another callback, since it became ready
        try:
            self._callback(*self._args)
        finally:
            if generation == self._generation:
                self.notifier.setEnabled(True)


class WindowEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's event loop for the window (see the module's docstring for what differs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Before qasync's __init__, which may already schedule callbacks (already_running).
        self._soon: deque[asyncio.Handle] = deque()
        self._soon_timer = QTimer()
        self._soon_timer.setSingleShot(True)
        self._soon_timer.setInterval(0)
        self._soon_timer.timeout.connect(self._run_soon)
        self._readers: dict[int, _Watch] = {}
        self._writers: dict[int, _Watch] = {}
        super().__init__(*args, **kwargs)

    # Callbacks: a queue run in one timer event, not a Qt timer each.

    def call_soon(
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        handle = self._queue(callback, args, context)
        if not self._soon_timer.isActive():
            self._soon_timer.start()
        return handle

    def run_now(self, callback: Callable[..., object], *args: Any) -> None:
        """Queue `callback` and run what is ready now, in this entry from Qt (a socket became
        readable: the read, and what it wakes, run without waiting for a timer)."""
        self._queue(callback, args, None)
        self._run_soon()

    def _queue(
        self, callback: Callable[..., object], args: tuple[Any, ...], context: Any
    ) -> asyncio.Handle:
        self._check_closed()
        if self.get_debug():
            self._check_callback(callback, "call_soon")
        handle = asyncio.Handle(callback, args, self, context=context)
        self._soon.append(handle)
        return handle

    def _run_soon(self) -> None:
        """Run the callbacks that are ready, then those they schedule, for up to `RUN_S`.

        A callback may run Qt's loop itself (a modal dialog): callbacks then run from there."""
        ready = len(self._soon)  # these run in any case, as in one pass of asyncio's loop
        deadline = time.perf_counter() + RUN_S
        try:
            while self._soon and (ready > 0 or time.perf_counter() < deadline):
                ready -= 1
                handle = self._soon.popleft()
                if not handle.cancelled():
                    handle._run()  # reports its own exceptions to the loop's handler
        finally:
            if self._soon and not self._soon_timer.isActive():
                self._soon_timer.start()

    # File descriptors: one notifier each, kept, enabled and disabled.

    def _add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:
        self._check_closed()
        self._watch(self._readers, fd, QSocketNotifier.Type.Read).arm(callback, args)

    def _remove_reader(self, fd: Any) -> bool:
        return self._unwatch(self._readers, fd)

    def _add_writer(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:
        self._check_closed()
        self._watch(self._writers, fd, QSocketNotifier.Type.Write).arm(callback, args)

    def _remove_writer(self, fd: Any) -> bool:
        return self._unwatch(self._writers, fd)

    def _watch(self, watches: dict[int, _Watch], fd: Any, kind: QSocketNotifier.Type) -> _Watch:
        number = _number(fd)
        watch = watches.get(number)
        if watch is None:
            watch = watches[number] = _Watch(self, number, kind)
        return watch

    def _unwatch(self, watches: dict[int, _Watch], fd: Any) -> bool:
        if self.is_closed():
            return False
        watch = watches.get(_number(fd))
        return watch.disarm() if watch is not None else False

    def close(self) -> None:
        if self.is_closed():
            return
        super().close()  # raises if the loop is running
        self._soon_timer.stop()
        self._soon.clear()
        for watch in [*self._readers.values(), *self._writers.values()]:
            watch.disarm()
            watch.notifier.activated.disconnect()
            watch.notifier.deleteLater()
        self._readers.clear()
        self._writers.clear()
