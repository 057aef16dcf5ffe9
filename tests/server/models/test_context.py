"""Fitting a long history into the context window."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.errors import PromptTooLongError
from server.models.context import MESSAGE_OVERHEAD, fit_to_context
from server.settings import LocalSettings
from server.types import ChatMessage
from tests.support.client import SSEStream
from tests.support.parley import Parley, wait_model_ready


def words(text: str) -> int:
    return len(text.split())


def msg(role: str, n: int) -> ChatMessage:
    return {"role": role, "content": " ".join(["w"] * n)}  # type: ignore[typeddict-item]


def test_everything_is_kept_when_it_fits() -> None:
    messages = [msg("system", 5), msg("user", 5), msg("assistant", 5), msg("user", 5)]
    kept, dropped, total = fit_to_context(messages, words, 1000)
    assert (kept, dropped, total) == (messages, 0, 20 + 4 * MESSAGE_OVERHEAD)


def test_oldest_turns_go_first_and_the_system_prompt_stays() -> None:
    messages = [msg("system", 5), msg("user", 50), msg("assistant", 50), msg("user", 5)]
    kept, dropped, total = fit_to_context(messages, words, 40)
    assert kept == [messages[0], messages[3]]
    assert dropped == 2  # the question and its now-orphaned answer
    assert total == 10 + 2 * MESSAGE_OVERHEAD


def test_a_last_message_that_cannot_fit_is_a_clear_error() -> None:
    with pytest.raises(PromptTooLongError, match="context: 506 tokens, and at most 100 fit"):
        fit_to_context([msg("user", 500)], words, 100)


@pytest.mark.timeout(300)  # ~25 s here alone, ~40 s with two CPU hogs: the 60 s default is tight
def test_a_history_longer_than_the_context_is_trimmed_not_fatal(data_dir: Path) -> None:
    server = Parley(data_dir, local=LocalSettings(n_ctx=1024)).start()
    try:
        wait_model_ready(server)
        history = []
        for i in range(12):
            history.append({"role": "user", "content": f"Question {i}: " + "tell me more " * 40})
            history.append({"role": "assistant", "content": "Here is more. " * 40})
        history.append({"role": "user", "content": "Say OK."})
        body = {"messages": history, "stream": True, "max_tokens": 8}
        # The prefill sends nothing for a while: each read may wait long on a busy machine.
        stream = SSEStream(server.port, "/v1/chat/completions", body, server.token, timeout=240)
        stream.read_all()
        final = stream.final
        assert final["parley"]["status"] == "completed"
        assert final["usage"]["context_dropped_messages"] > 0
        assert final["usage"]["prompt_tokens"] <= 1024
    finally:
        server.stop()
