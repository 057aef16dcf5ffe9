"""The model lease: FIFO, and a cancelled waiter never holds it."""

from __future__ import annotations

import asyncio

from server.models.lease import Lease


def test_waiters_are_served_in_arrival_order() -> None:
    async def scenario() -> list[str]:
        lease = Lease()
        order: list[str] = []
        await lease.acquire("first")

        async def turn(name: str) -> None:
            await lease.acquire(name)
            order.append(name)
            await asyncio.sleep(0)
            lease.release(name)

        tasks = []
        for name in ("a", "b", "c", "d"):
            tasks.append(asyncio.create_task(turn(name)))
            await asyncio.sleep(0)  # let it queue before the next one arrives
        assert lease.queue_length == 4
        lease.release("first")
        await asyncio.gather(*tasks)
        assert not lease.in_use
        return order

    assert asyncio.run(scenario()) == ["a", "b", "c", "d"]


def test_cancelled_waiter_leaves_the_queue_and_never_holds_the_lease() -> None:
    async def scenario() -> None:
        lease = Lease()
        await lease.acquire("holder")
        cancelled = asyncio.create_task(lease.acquire("cancelled"))
        later = asyncio.create_task(lease.acquire("later"))
        await asyncio.sleep(0)
        assert lease.queue_length == 2
        cancelled.cancel()
        await asyncio.sleep(0)
        assert lease.queue_length == 1
        lease.release("holder")
        await later
        assert lease.held_by("later")
        assert cancelled.cancelled()

    asyncio.run(scenario())


def test_waiter_cancelled_in_the_instant_it_is_granted_passes_the_lease_on() -> None:
    async def scenario() -> None:
        lease = Lease()
        await lease.acquire("holder")
        granted = asyncio.create_task(lease.acquire("granted"))
        nxt = asyncio.create_task(lease.acquire("next"))
        await asyncio.sleep(0)
        lease.release("holder")  # grants "granted" ...
        granted.cancel()  # ... which is cancelled before it resumes
        await asyncio.sleep(0)
        await nxt
        assert lease.held_by("next")
        assert granted.cancelled()

    asyncio.run(scenario())


def test_release_by_a_non_holder_is_refused_and_changes_nothing() -> None:
    async def scenario() -> None:
        lease = Lease()
        await lease.acquire("holder")
        assert lease.release("someone else") is False
        assert lease.held_by("holder")
        assert lease.release("holder") is True
        assert lease.release("holder") is False
        assert not lease.in_use

    asyncio.run(scenario())


def test_two_slots_hold_two_at_once_and_the_rest_wait_in_order() -> None:
    async def scenario() -> None:
        lease = Lease(slots=2)
        await lease.acquire("a")
        await lease.acquire("b")  # both slots, at once
        assert (lease.busy, lease.queue_length) == (2, 0)
        waiting = [asyncio.create_task(lease.acquire(name)) for name in ("c", "d", "e")]
        await asyncio.sleep(0)
        assert lease.queue_length == 3
        waiting[1].cancel()  # "d" gives up while it waits
        await asyncio.sleep(0)
        lease.release("b")
        await waiting[0]
        assert lease.held_by("c") and not lease.held_by("e")
        lease.release("a")
        await waiting[2]
        assert lease.held_by("e") and not lease.held_by("d")
        assert (lease.busy, lease.queue_length) == (2, 0)
        assert not lease.release("d")  # never held one
        lease.release("c")
        lease.release("e")
        assert not lease.in_use

    asyncio.run(scenario())
