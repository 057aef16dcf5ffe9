"""The app's background work on the GUI loop: started, remembered, reported, cancelled.

qasync keeps no strong reference to a task it runs, and the quit path must hang up every
request still in flight: so every coroutine the GUI starts goes through one `Tasks`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from desktop.errors import ClientError

log = logging.getLogger(__name__)


class Tasks:
    """A set of running tasks whose failures are reported as one message for the user."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._tasks: set[asyncio.Task[None]] = set()
        self._lasting: set[asyncio.Task[None]] = set()
        self._closed = False

    def __len__(self) -> int:
        """The work in flight that ends on its own (not what `follow` started)."""
        return len(self._tasks - self._lasting)

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        """Run it on the loop (its task, to cancel it by; a cancelled task is no failure);
        once closed, nothing new starts (None)."""
        if self._closed:
            coroutine.close()
            return None
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._on_task_done)
        return task

    def follow(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        """`spawn` for work that lasts until it is cancelled (a stream that stays open): not
        counted by len(), which says whether the work started has finished."""
        task = self.spawn(coroutine)
        if task is not None:
            self._lasting.add(task)
            task.add_done_callback(self._lasting.discard)
        return task

    async def close(self) -> None:
        """Start nothing more; cancel the others and wait until they have unwound (their
        HTTP requests closed), so the client can be closed after this."""
        self._closed = True
        current = asyncio.current_task()
        others = [task for task in self._tasks if task is not current]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, ClientError):
            self._report(error.message)
        elif error is not None:
            log.error("background task failed", exc_info=error)
            self._report(f"Something went wrong: {error}")
