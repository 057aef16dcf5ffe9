"""The Run itself, with in-process backends: settle once, shielded, lease held until work stops."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path

import anyio
import pytest

from server.agent.buffer import ReplyBuffer
from server.agent.loop import AgentLoop
from server.agent.provenance import Provenance
from server.errors import StorageError, UnavailableError
from server.models.base import ChatRequest, StopSignal, StreamEnd, StreamEvent, TextDelta
from server.models.registry import ModelEntry
from server.settings import Limits
from server.storage.store import Ending, Store
from server.turns.manager import RunManager
from server.turns.run import Run


class ThreadBackend:
    """Generates in a worker thread, like llama.cpp: checks the stop flag per token."""

    name = "threaded"
    kind = "test"
    slots = 1
    tools_unsupported = None
    context_length = None  # not known: never compacted
    state = "ready"
    state_error = None

    def __init__(self, tokens: int, per_token: float, linger_after_stop: float = 0.0) -> None:
        self.tokens = tokens
        self.per_token = per_token
        self.linger_after_stop = linger_after_stop
        self.thread_exited = threading.Event()
        self.generated_after_stop = 0

    async def stream(
        self, request: ChatRequest, signal: StopSignal
    ) -> AsyncGenerator[StreamEvent, None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def work() -> None:
            try:
                for index in range(self.tokens):
                    if signal.requested:
                        time.sleep(self.linger_after_stop)  # a stubborn worker
                        return
                    time.sleep(self.per_token)
                    loop.call_soon_threadsafe(queue.put_nowait, f"w{index} ")
                loop.call_soon_threadsafe(queue.put_nowait, None)
            finally:
                self.thread_exited.set()
                signal.confirm_stopped()

        threading.Thread(target=work, daemon=True).start()
        while True:
            item = await queue.get()
            if item is None:
                break
            yield TextDelta(item)
        yield StreamEnd("stop")

    async def admit(self, request: ChatRequest) -> None:
        pass

    async def aclose(self) -> None:
        pass


class CountingSink:
    def __init__(self, failures: int = 0) -> None:
        self.finishes: list[Ending] = []
        self.checkpoints: list[str] = []
        self.failures = failures
        self.opens = 0

    async def open(self) -> ChatRequest:
        self.opens += 1
        return ChatRequest(messages=[])

    sources = ()
    earlier = None
    history = None  # stateless, as the OpenAI API's: nothing to compact
    compact_only = False

    def toolbox(self) -> None:
        return None

    def checkpoint(self, text: str, parts: object = None) -> None:
        self.checkpoints.append(text)

    async def finish(self, ending: Ending) -> None:
        if self.failures:
            self.failures -= 1
            raise StorageError("database is locked (simulated)")
        self.finishes.append(ending)


class SlowDiskSink(CountingSink):
    """Checkpoint writes that complete only when the test says (a slow or locked disk)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[concurrent.futures.Future[object]] = []

    def checkpoint(self, text: str, parts: object = None) -> concurrent.futures.Future[object]:  # type: ignore[override]
        self.checkpoints.append(text)
        self.writes.append(concurrent.futures.Future())
        return self.writes[-1]


async def until(condition: Callable[[], object], within: float = 10.0) -> None:
    """Wait for `condition` to hold (a worker thread's fact, looked at every 5 ms); fail after
    `within` seconds instead of hanging when it never does."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {within:g} s")
        await asyncio.sleep(0.005)


def make_run(
    backend: ThreadBackend, sink: CountingSink, stop_timeout: float = 5.0, **limits: int
) -> Run:
    entry = ModelEntry(backend)  # type: ignore[arg-type]
    chosen = Limits(stop_timeout=stop_timeout, checkpoint_interval=0.05, **limits)  # type: ignore[arg-type]
    return Run("r1", entry, sink, chosen, lambda run: None)


def test_lease_is_held_until_a_stubborn_worker_really_returns() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=1000, per_token=0.01, linger_after_stop=0.5)
        sink = CountingSink()
        run = make_run(backend, sink, stop_timeout=0.1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            await until(lambda: len(run.buffer.pieces) >= 3)
            run.stop("client_hangup")
            await run.wait_done()
            # Settled after the bounded wait, but the worker still runs: the model stays leased.
            assert run.ending is not None and run.ending.status == "interrupted"
            assert not backend.thread_exited.is_set()
            assert run.model.lease.in_use
            await until(lambda: not run.model.lease.in_use)
            assert backend.thread_exited.is_set()  # given back only once the worker returned
        assert len(sink.finishes) == 1

    asyncio.run(scenario())


def test_stop_races_with_completion_and_settles_once() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=5, per_token=0.001)
        sink = CountingSink()
        run = make_run(backend, sink)
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            for _ in range(200):
                run.stop("client_hangup")
                await asyncio.sleep(0)
            await run.wait_done()
            for _ in range(5):
                run.stop("shutdown")
        assert len(sink.finishes) == 1
        assert sink.finishes[0].content.startswith("".join(run.buffer.pieces))

    asyncio.run(scenario())


def test_cancelling_the_run_task_itself_still_saves_as_shutdown() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=1000, per_token=0.005)
        sink = CountingSink()
        run = make_run(backend, sink)
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            await until(lambda: len(run.buffer.pieces) >= 2)
            tg.cancel_scope.cancel()  # what a server shutdown does to leftover tasks
        assert run.done
        assert len(sink.finishes) == 1
        ending = sink.finishes[0]
        assert (ending.status, ending.ended_by) == ("interrupted", "shutdown")
        assert ending.content == run.text and len(run.buffer.pieces) >= 2
        assert backend.thread_exited.wait(2)

    asyncio.run(scenario())


@pytest.mark.parametrize(("failures", "saved"), [(2, True), (3, False)])
def test_final_write_is_retried(failures: int, saved: bool) -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=3, per_token=0.001)
        sink = CountingSink(failures=failures)
        run = make_run(backend, sink)
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            await run.wait_done()
        assert (len(sink.finishes) == 1) is saved
        assert run.ending is not None
        assert (run.ending.save_error is None) is saved
        assert not run.model.lease.in_use

    asyncio.run(scenario())


def test_a_run_stopped_before_it_opens_writes_nothing_and_never_leases_the_model() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=5, per_token=0.001)
        sink = CountingSink()
        run = make_run(backend, sink)
        run.stop("shutdown")
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            with pytest.raises(UnavailableError, match="stopped before it began"):
                await run.wait_opened()
            await run.wait_done()
        assert sink.opens == 0 and not backend.thread_exited.is_set()
        assert run.ending is not None
        assert (run.ending.status, run.ending.ended_by) == ("interrupted", "shutdown")
        assert not run.model.lease.in_use

    asyncio.run(scenario())


def test_checkpoints_never_pile_up_behind_a_slow_disk() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=60, per_token=0.01)
        sink = SlowDiskSink()
        run = make_run(backend, sink)  # a checkpoint every 50 ms wanted
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            # ~300 ms: six intervals while the first write hangs
            await until(lambda: len(run.buffer.pieces) >= 30)
            assert len(sink.checkpoints) == 1  # one write in flight, no queue behind it
            sink.writes[0].set_result(None)
            await until(lambda: len(sink.checkpoints) >= 2)
            # The next write takes the latest text, not the one of an old interval.
            assert len(sink.checkpoints[1]) > len(sink.checkpoints[0])
            assert sink.checkpoints[1] == "".join(
                run.buffer.pieces[: sink.checkpoints[1].count(" ")]
            )
            for write in sink.writes:
                if not write.done():
                    write.set_result(None)
            await run.wait_done()

    asyncio.run(scenario())


def test_a_reply_at_the_size_limit_is_cut_there_and_its_work_stopped() -> None:
    async def scenario() -> None:
        # Tokens are "wN " (3-5 chars): the limit falls inside one of them.
        backend = ThreadBackend(tokens=100_000, per_token=0.0001)
        sink = CountingSink()
        run = make_run(backend, sink, max_reply_chars=1_001)
        async with anyio.create_task_group() as tg:
            tg.start_soon(run.life)
            await run.wait_done()
        assert backend.thread_exited.wait(2)
        assert len(sink.finishes) == 1
        ending = sink.finishes[0]
        assert (ending.status, ending.ended_by) == ("error", "error")
        assert ending.error is not None and "limit of 1,001 characters" in ending.error
        assert len(ending.content) == 1_001
        assert ending.content == "".join(f"w{i} " for i in range(400))[:1_001]
        assert not run.model.lease.in_use

    asyncio.run(scenario())


def test_a_follower_far_behind_takes_the_reply_in_bounded_pieces() -> None:
    async def scenario() -> None:
        backend = ThreadBackend(tokens=0, per_token=0.0)
        run = make_run(backend, CountingSink())
        for index in range(50_000):  # ~340,000 characters waiting for a slow reader
            run.buffer.append(f"w{index} ")
        pieces: list[str] = []
        async for item in run.follow():
            assert isinstance(item, str)
            pieces.append(item)
            if sum(map(len, pieces)) == len(run.text):
                break
        longest_part = max(map(len, run.buffer.pieces))
        assert max(map(len, pieces)) < Limits().follow_piece_chars + longest_part
        assert "".join(pieces) == run.text

    asyncio.run(scenario())


def test_a_model_is_in_use_while_any_loop_of_a_running_tree_uses_it(tmp_path: Path) -> None:
    """Removing or reconfiguring a model is refused while a reply's tree uses it, between its
    model calls too (a sub-agent's, while tools run): Stop ends them all first (issue 41)."""

    async def scenario() -> None:
        manager = RunManager(Store(tmp_path / "unused.sqlite3"), Limits())
        entry = ModelEntry(ThreadBackend(tokens=1000, per_token=0.01))  # type: ignore[arg-type]
        other = ModelEntry(ThreadBackend(tokens=1, per_token=0.01))  # type: ignore[arg-type]
        async with manager.running():
            run = manager.start_stateless(entry, ChatRequest(messages=[]))
            await until(lambda: run.buffer.pieces)
            assert manager.using(entry) and not manager.using(other)
            # A loop of its tree on another model (a sub-agent's), holding no lease now.
            node = run.agent.node.below(
                "r1/c", ReplyBuffer(100, lambda: None), Limits(), Provenance()
            )
            AgentLoop(node, other)  # joins the run's tree
            assert manager.using(other) and not other.lease.in_use
            run.stop("client_hangup")
            await run.wait_done()
            assert not manager.using(entry) and not manager.using(other)

    asyncio.run(scenario())
