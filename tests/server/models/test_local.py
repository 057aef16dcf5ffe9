"""The bundled model through Parley's API, on a real socket: real generation, real interrupts.

Whether the engine really stopped is asked of the engine itself (its `/slots`: is any slot
still processing?), in its own process, not inferred from Parley's side of the stream.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import httpx
import pytest

from server.errors import BackendError
from server.models.base import ChatRequest, StopSignal
from server.models.local import GenerationStats, LocalBackend
from server.settings import LocalSettings
from tests.support.client import SSEStream
from tests.support.parley import Parley
from tests.support.waiting import wait_for

STORY = "Write a very long story about a dragon and a knight, at least 1000 words."


def backend(server: Parley) -> LocalBackend:
    entry = server.services.models.resolve(None)
    assert isinstance(entry.backend, LocalBackend)
    return entry.backend


def engine_slots_busy(server: Parley, timeout: float = 30.0) -> bool:
    """Whether a slot of the engine is processing (its own account, not the lease's)."""
    engine = backend(server).engine
    assert engine is not None
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    slots = httpx.get(f"{engine.url}/slots", headers=headers, timeout=timeout).json()
    return any(slot["is_processing"] for slot in slots)


def engine_idle_after(server: Parley, since: float, timeout: float = 30.0) -> float:
    """Seconds from `since` until no slot of the engine is processing."""

    def idle_for() -> float | None:
        return None if engine_slots_busy(server, timeout) else time.perf_counter() - since

    idle: float = wait_for(idle_for, timeout)
    return idle


def completions(server: Parley, **body: Any) -> SSEStream:
    body.setdefault("messages", [{"role": "user", "content": STORY}])
    body.setdefault("stream", True)
    return SSEStream(server.port, "/v1/chat/completions", body, server.token)


def test_bundled_model_is_the_default_and_completes_a_short_reply(local_parley: Parley) -> None:
    status = local_parley.status()
    assert status["default_model"] == "smollm2-135m-instruct"
    conversation_id = local_parley.new_conversation()
    stream = local_parley.send(conversation_id, "What is the capital of France? One word.")
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
    message = local_parley.message(conversation_id, stream.first["message_id"])
    assert message["content"] == stream.delivered and message["content"].strip()
    assert message["status"] == "completed"
    assert message["usage"]["prompt_tokens"] > 0
    assert message["usage"]["completion_tokens"] > 0
    assert "completion_tokens_estimated" not in message["usage"]


def test_hang_up_mid_reply_stops_the_engine_and_frees_the_slot(local_parley: Parley) -> None:
    conversation_id = local_parley.new_conversation()
    stream = local_parley.send(conversation_id, STORY)
    delivered = stream.read_until(lambda text: len(text) > 40)
    hung_up_at = stream.hang_up()

    message = local_parley.wait_settled(conversation_id, stream.first["message_id"])
    # The engine's own slot is free at once: 0.05-0.11 s here (a token takes ~15 ms); the
    # bound is 20x that, for a busy machine. Without the stop it runs to its 1,000 words.
    assert engine_idle_after(local_parley, hung_up_at) < 2.0
    local_parley.wait_idle()
    stats = backend(local_parley).generations[-1]
    assert stats.returned_at is not None  # the stream from the engine is closed
    assert message["content"].startswith(delivered)
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    model = local_parley.status()["models"][0]
    assert (model["in_use"], model["slots_busy"]) == (False, 0)


@pytest.mark.timeout(300)  # ~5 s here alone, ~25 s with two CPU hogs: the 60 s default is tight
def test_two_conversations_stream_at_once_and_a_third_waits_its_turn(
    local_parley: Parley,
) -> None:
    assert local_parley.status()["models"][0]["slots"] == 2
    first = completions(local_parley, max_tokens=60)
    second = completions(local_parley, max_tokens=60)
    first.read_until(lambda text: len(text) > 0)
    second.read_until(lambda text: len(text) > 0)
    # Both are streaming: neither has finished while the other has begun.
    third = completions(local_parley, max_tokens=10)
    local_parley.wait_for(lambda: local_parley.queue_length() == 1)
    assert local_parley.status()["models"][0]["slots_busy"] == 2
    for stream in (first, second, third):
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    gens = list(backend(local_parley).generations)[-3:]
    assert gens[1].started < gens[0].returned_at  # type: ignore[operator]
    # The third began only once a slot was free.
    assert gens[2].started >= min(g.returned_at for g in gens[:2])  # type: ignore[type-var]


def test_queued_request_whose_client_hangs_up_never_runs(local_parley: Parley) -> None:
    before = len(backend(local_parley).generations)
    running = [completions(local_parley, max_tokens=400) for _ in range(2)]
    for stream in running:
        stream.read_until(lambda text: len(text) > 0)
    queued = completions(local_parley, max_tokens=30)
    local_parley.wait_for(lambda: local_parley.queue_length() == 1)
    queued.hang_up()
    # It leaves the queue while both slots are still taken (400 tokens take seconds): the
    # running ones need not be read to their end, which takes a minute on a busy machine.
    local_parley.wait_for(lambda: local_parley.queue_length() == 0)
    assert local_parley.status()["models"][0]["slots_busy"] == 2
    for stream in running:
        stream.hang_up()
    local_parley.wait_idle()
    assert len(backend(local_parley).generations) == before + 2  # only the running ones

    after = completions(local_parley, max_tokens=5)
    after.read_all()
    assert after.final["parley"]["status"] == "completed"


def test_hang_up_during_prefill_stops_the_engine_at_the_next_batch(local_parley: Parley) -> None:
    # ~3,000 tokens: its prefill takes ~9 s here; a stopped one ends within a batch or two.
    long_history = [
        {"role": "user", "content": "Remember these words: " + "lantern river stone " * 600},
        {"role": "assistant", "content": "I will remember them. " * 150},
        {"role": "user", "content": "Now list every word, in order."},
    ]
    gens = backend(local_parley).generations
    before = len(gens)
    stream = completions(local_parley, messages=long_history, max_tokens=50)
    stats: GenerationStats = local_parley.wait_for(
        lambda: len(gens) > before and gens[-1].prefill_started and gens[-1]
    )
    local_parley.wait_for(lambda: engine_slots_busy(local_parley))  # the engine is prefilling
    assert stats.token_times == []
    hung_up_at = stream.hang_up()
    assert engine_idle_after(local_parley, hung_up_at) < 3.0
    local_parley.wait_idle()
    assert stats.token_times == []
    assert stats.returned_at is not None

    after = completions(local_parley, max_tokens=5)
    after.read_all()
    assert after.final["parley"]["status"] == "completed"


@pytest.mark.timeout(300)  # ~5 s here alone, ~27 s with two CPU hogs: the 60 s default is tight
def test_going_back_to_a_conversation_reuses_its_evaluated_history(local_parley: Parley) -> None:
    # Two long conversations used in turn (A, B, A): A's history is not evaluated again.
    def document(seed: int) -> str:
        words = ["lantern", "river", "stone", "copper", "meadow", "violin", "harbor", "pencil"]
        return " ".join(words[(seed * 7 + i * i) % len(words)] for i in range(400))

    def time_to_first_output(conversation_id: str, content: str) -> float:
        started = time.perf_counter()
        # The prefill sends nothing for seconds (~3.5 s here, more on a busy CI machine).
        stream = local_parley.send(conversation_id, content, max_tokens=4, timeout=120.0)
        stream.first  # noqa: B018 - the ids come at once; then the model's first output
        stream.next_event()
        elapsed = time.perf_counter() - started
        stream.read_all()
        return elapsed

    a, b = local_parley.new_conversation(), local_parley.new_conversation()
    first_a = time_to_first_output(a, document(1) + "\nSummarize.")
    time_to_first_output(b, document(2) + "\nSummarize.")
    second_a = time_to_first_output(a, "In one word?")
    assert first_a > 1.0  # a long prefill: the bound below means something
    assert second_a < 0.5 * first_a  # measured ~3 % (docs/benchmarks.md); a loose bound


def test_a_removed_model_never_starts_an_engine_again() -> None:
    async def scenario() -> None:
        backend = LocalBackend(LocalSettings())
        await backend.aclose()  # removed (DELETE) or shut down, maybe while a request waited
        events = backend.stream(ChatRequest([{"role": "user", "content": "hi"}]), StopSignal())
        with pytest.raises(BackendError, match="was removed"):
            await anext(events)
        assert backend.engine is None and backend.state == "unloaded"

    asyncio.run(scenario())


def test_an_engine_that_dies_mid_reply_ends_it_as_an_error_and_starts_again(
    local_parley: Parley,
) -> None:
    engine = backend(local_parley).engine
    assert engine is not None and engine.pid is not None
    conversation_id = local_parley.new_conversation()
    stream = local_parley.send(conversation_id, STORY)
    delivered = stream.read_until(lambda text: len(text) > 20)
    os.kill(engine.pid, signal.SIGKILL)  # a native crash, as the OS would end it
    stream.read_all()
    outcome = stream.final["parley"]
    assert outcome["status"] == "error" and "local engine" in outcome["error"]
    message = local_parley.wait_settled(conversation_id, stream.first["message_id"])
    assert message["content"].startswith(delivered)
    local_parley.wait_idle()
    after = completions(local_parley, max_tokens=5)  # the next request starts it again
    after.read_all()
    assert after.final["parley"]["status"] == "completed"
    assert backend(local_parley).engine is not engine
