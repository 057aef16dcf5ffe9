"""The bundled model through Parley's API, on a real socket: real generation, real interrupts.

Token counts, not seconds: the worker thread records when each token was produced
(time.perf_counter, the same clock the test's hang-up uses).
"""

from __future__ import annotations

from typing import Any

from server.models.local import GenerationStats, LocalBackend
from tests.support.client import SSEStream
from tests.support.parley import Parley

STORY = "Write a very long story about a dragon and a knight, at least 1000 words."


def backend(server: Parley) -> LocalBackend:
    entry = server.services.models.resolve(None)
    assert isinstance(entry.backend, LocalBackend)
    return entry.backend


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


def test_hang_up_mid_reply_stops_within_one_token_and_frees_the_model(
    local_parley: Parley,
) -> None:
    conversation_id = local_parley.new_conversation()
    stream = local_parley.send(conversation_id, STORY)
    delivered = stream.read_until(lambda text: len(text) > 40)
    hung_up_at = stream.hang_up()

    message = local_parley.wait_settled(conversation_id, stream.first["message_id"])
    local_parley.wait_idle()
    stats = backend(local_parley).generations[-1]
    assert stats.returned_at is not None  # the worker thread really returned
    assert sum(1 for t in stats.token_times if t > hung_up_at) <= 1
    assert message["content"].startswith(delivered)
    assert (message["status"], message["ended_by"]) == ("interrupted", "client_hangup")
    assert not local_parley.status()["models"][0]["in_use"]


def test_concurrent_requests_are_served_one_after_the_other_in_arrival_order(
    local_parley: Parley,
) -> None:
    first = completions(local_parley, max_tokens=30)
    first.read_until(lambda text: len(text) > 0)
    second = completions(local_parley, max_tokens=30)
    # The second waits for the model while the first generates.
    local_parley.wait_for(lambda: local_parley.queue_length() == 1)
    first.read_all()
    second.read_all()
    assert first.final["parley"]["status"] == "completed"
    assert second.final["parley"]["status"] == "completed"
    gens = list(backend(local_parley).generations)[-2:]
    assert gens[0].returned_at is not None
    assert gens[1].started >= gens[0].returned_at


def test_queued_request_whose_client_hangs_up_never_runs(local_parley: Parley) -> None:
    before = len(backend(local_parley).generations)
    running = completions(local_parley, max_tokens=400)
    running.read_until(lambda text: len(text) > 0)
    queued = completions(local_parley, max_tokens=30)
    local_parley.wait_for(lambda: local_parley.queue_length() == 1)
    queued.hang_up()
    running.read_all()
    local_parley.wait_idle()
    assert len(backend(local_parley).generations) == before + 1  # only the running one

    after = completions(local_parley, max_tokens=5)
    after.read_all()
    assert after.final["parley"]["status"] == "completed"


def test_hang_up_during_prefill_aborts_the_prefill(local_parley: Parley) -> None:
    long_history = [
        {"role": "user", "content": "Remember these words: " + "lantern river stone " * 300},
        {"role": "assistant", "content": "I will remember them. " * 150},
        {"role": "user", "content": "Now list every word, in order."},
    ]
    gens = backend(local_parley).generations
    before = len(gens)
    stream = completions(local_parley, messages=long_history, max_tokens=50)
    # Hang up once the prompt evaluation (seconds for this history) has begun.
    stats: GenerationStats = local_parley.wait_for(
        lambda: len(gens) > before and gens[-1].prefill_started and gens[-1]
    )
    stream.hang_up()
    local_parley.wait_idle()
    assert stats.prefill_aborted, "the prefill ran to the end instead of being aborted"
    assert stats.token_times == []
    assert stats.returned_at is not None

    after = completions(local_parley, max_tokens=5)
    after.read_all()
    assert after.final["parley"]["status"] == "completed"
