"""The server's parse workers as one pool (issue 48): files wait for a free worker in the
order they came, an idle worker is closed and the next file starts one, a stopped pool skips
what it is given and leaves no worker running."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import pytest

from server.library import pool
from server.library.pool import STOPPED, ParsePool
from server.library.worker import Skipped

pytestmark = pytest.mark.slow

T = TypeVar("T")


def run(body: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(body)


def test_files_wait_for_a_free_worker_in_the_order_they_came() -> None:
    async def body() -> tuple[list[int], list[str | Skipped], ParsePool]:
        parsers = ParsePool(1)
        done: list[int] = []
        texts: list[str | Skipped] = []

        async def parse(index: int) -> None:
            texts.append(await parsers.text("text", f"file {index}".encode()))
            done.append(index)

        async with parsers.running(), anyio.create_task_group() as tg:
            for index in range(4):
                tg.start_soon(parse, index)
                await anyio.wait_all_tasks_blocked()  # each is queued before the next
        return done, texts, parsers

    done, texts, parsers = run(body)
    assert done == [0, 1, 2, 3]
    assert texts == ["file 0", "file 1", "file 2", "file 3"]
    assert parsers.most_busy == 1 and parsers.started == 1  # one worker served them all


def test_an_idle_worker_is_closed_and_the_next_file_starts_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pool, "WORKER_IDLE_S", 0.2)

    async def body() -> tuple[list[int], list[int], str | Skipped, int]:
        parsers = ParsePool(2)
        async with parsers.running():
            await parsers.text("text", b"one")
            busy = parsers.pids
            with anyio.fail_after(10):  # a fact with a deadline: closed after its idle time
                while parsers.pids:
                    await anyio.sleep(0.01)
            after = await parsers.text("text", b"two")
            return busy, parsers.pids, after, parsers.started

    busy, alive, after, started = run(body)
    assert len(busy) == 1 and alive and alive != busy
    assert after == "two" and started == 2


def test_a_stopped_pool_skips_files_and_leaves_no_worker() -> None:
    async def body() -> tuple[list[int], str | Skipped, list[int]]:
        parsers = ParsePool(2)
        async with parsers.running():
            await parsers.text("text", b"warm")
            alive = parsers.pids
        return alive, await parsers.text("text", b"late"), parsers.pids

    alive, late, after = run(body)
    assert len(alive) == 1
    assert late == Skipped(STOPPED) and after == []
