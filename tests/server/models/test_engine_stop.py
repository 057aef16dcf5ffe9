"""A Stop during a long prefill frees the engine for the very next reply: the real engine,
the bundled model, Parley's own engine settings (LocalSettings' defaults).

The engine stops a cancelled prefill only between batches, and hears of a hang-up only
when it writes a batch's progress, after the next batch has begun: a stopped prefill keeps
the engine for up to two batches. What it evaluates after the hang-up is read from the
engine itself (its slot's prompt, in tokens), so the bound does not depend on the
machine's speed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from server.models.bundled import bundled_gguf
from server.models.engine import Engine, EngineConfig
from server.settings import LocalSettings
from tests.support.waiting import wait_for

WORDS = ["river", "lantern", "copper", "meadow", "signal", "harbor", "winter", "pocket", "violin"]
# ~2,300 tokens: a prefill of seconds, stopped a few batches in.
LONG = " ".join(WORDS[i * 7 % len(WORDS)] for i in range(2200)) + "\n\nSummarize the text above."


@pytest.fixture
def engine() -> Iterator[Engine]:
    local = LocalSettings()
    running = Engine(
        EngineConfig(
            model=str(bundled_gguf()),
            alias="bundled",
            n_ctx=local.n_ctx,
            n_parallel=local.n_parallel,
            n_batch=local.n_batch,
            n_threads=local.n_threads,
            n_threads_batch=local.n_threads_batch,
            n_gpu_layers=0,
        )
    )
    running.start()
    yield running
    running.stop()


def slots(engine: Engine) -> list[dict[str, object]]:
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    found: list[dict[str, object]] = httpx.get(
        f"{engine.url}/slots", headers=headers, timeout=30
    ).json()
    return found


def first_token_after(engine: Engine, slot: int) -> float:
    """Seconds from sending a short request (to `slot`) to its first token."""
    body = {
        "messages": [{"role": "user", "content": "hello"}],
        "stream": True,
        "max_tokens": 1,
        "id_slot": slot,
    }
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    sent = time.perf_counter()
    with httpx.stream(
        "POST", f"{engine.url}/v1/chat/completions", json=body, headers=headers, timeout=60
    ) as reply:
        for line in reply.iter_lines():
            if '"content":"' in line or '"finish_reason":"' in line:
                return time.perf_counter() - sent
    raise AssertionError("the short request ended without a token")


def test_a_stopped_prefill_frees_the_engine_within_a_few_small_batches(engine: Engine) -> None:
    body = {
        "messages": [{"role": "user", "content": LONG}],
        "stream": True,
        "max_tokens": 16,
        "return_progress": True,  # as Parley asks: the engine writes after every batch
        "id_slot": 0,  # its slot, known without asking the engine while it may be stopping
    }
    headers = {"Authorization": f"Bearer {engine.key}", "Connection": "close"}
    processed = 0
    with httpx.stream(
        "POST", f"{engine.url}/v1/chat/completions", json=body, headers=headers, timeout=120
    ) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: {") and "prompt_progress" in line:
                processed = json.loads(line[6:])["prompt_progress"]["processed"]
                if processed >= 128:  # a few batches in: a prefill well under way
                    break
    # Hung up as the loop is left (httpx closes the stream with its line reader), as Stop
    # does; the engine may already have heard it, so its slots are not asked which one is
    # busy. The next reply is sent at once, to the other slot.
    assert processed >= 128
    waited = first_token_after(engine, 1)

    def cancelled_prompt() -> int | None:
        found = next(s for s in slots(engine) if s["id"] == 0)
        done = not found["is_processing"]
        return int(found["n_prompt_tokens"]) if done else None  # type: ignore[call-overload]

    evaluated_after = wait_for(cancelled_prompt, 30) - processed
    # The batch in flight and the next (16 tokens each: 32, ~0.1 s here); 64 tokens a batch
    # (the engine held for 0.4-0.5 s, a Stop then a send) evaluated 128.
    assert evaluated_after <= 48, evaluated_after
    # The user's measure, with a wide margin: 0.1-0.2 s here alone, once 2.1 s beside other
    # engines' tests on the same two cores (the bound above is the one that does not move).
    assert waited < 5.0, waited
