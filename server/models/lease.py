"""The model's "in use" mark: one holder at a time, waiters served first come, first served.

Release is a plain synchronous call, so no cancellation can skip it; a waiter whose task is
cancelled leaves the queue and never holds the lease.
"""

from __future__ import annotations

import asyncio
from collections import deque


class Lease:
    def __init__(self) -> None:
        self._holder: object | None = None
        self._waiters: deque[tuple[object, asyncio.Future[None]]] = deque()

    @property
    def in_use(self) -> bool:
        return self._holder is not None

    @property
    def queue_length(self) -> int:
        return sum(1 for _, future in self._waiters if not future.done())

    def held_by(self, owner: object) -> bool:
        return self._holder is owner

    async def acquire(self, owner: object) -> None:
        if self._holder is None and not self._waiters:
            self._holder = owner
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

    def release(self, owner: object) -> bool:
        """Give the lease to the next live waiter. Returns False if `owner` did not hold it."""
        if self._holder is not owner:
            return False
        self._holder = None
        while self._waiters:
            nxt, future = self._waiters.popleft()
            if future.done():
                continue
            self._holder = nxt
            future.set_result(None)
            break
        return True
