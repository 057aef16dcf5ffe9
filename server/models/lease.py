"""A model's slots: at most `slots` holders at a time, waiters served first come, first served.

Release is a plain synchronous call, so no cancellation can skip it; a waiter whose task is
cancelled leaves the queue and never holds a slot. A holder keeps its slot until its work
has really stopped (server/turns/run.py), so the slots count what the model is doing.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable


class Lease:
    def __init__(self, slots: int = 1) -> None:
        if slots < 1:
            raise ValueError(f"a model needs at least one slot, got {slots}")
        self.slots = slots
        self._holders: list[object] = []
        self._waiters: deque[tuple[object, asyncio.Future[None]]] = deque()
        # Told after each acquire and release (on the loop): the model's idle clock stops
        # while it is used and starts when its last user lets go (server/models/residency.py),
        # with no polling.
        self.on_change: Callable[[], None] | None = None

    @property
    def in_use(self) -> bool:
        return bool(self._holders)

    @property
    def busy(self) -> int:
        return len(self._holders)

    @property
    def queue_length(self) -> int:
        return sum(1 for _, future in self._waiters if not future.done())

    def held_by(self, owner: object) -> bool:
        return any(holder is owner for holder in self._holders)

    async def acquire(self, owner: object) -> None:
        if len(self._holders) < self.slots and not self._waiters:
            self._holders.append(owner)
            self._changed()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (owner, future)
        self._waiters.append(entry)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                # Granted in the same instant we were cancelled: pass it on at once.
                self.release(owner)
            elif entry in self._waiters:
                self._waiters.remove(entry)
            raise
        self._changed()

    def release(self, owner: object) -> bool:
        """Free `owner`'s slot for the next live waiter. False if `owner` held none."""
        for index, holder in enumerate(self._holders):
            if holder is owner:
                del self._holders[index]
                break
        else:
            return False
        while self._waiters and len(self._holders) < self.slots:
            nxt, future = self._waiters.popleft()
            if future.done():
                continue
            self._holders.append(nxt)
            future.set_result(None)
        self._changed()
        return True

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
