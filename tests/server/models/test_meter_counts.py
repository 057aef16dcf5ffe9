"""The context meter of a long chat counts with the tokenizer only as far back as a prompt
could reach; older messages are estimated (and the meter says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.models.context import COUNTED_CONTEXTS, MESSAGE_OVERHEAD, counted_from
from server.settings import LocalSettings
from tests.server.models.test_local import backend
from tests.server.transfer.test_big_import import post
from tests.support.parley import Parley, wait_model_ready


def test_only_the_newest_messages_within_a_few_contexts_are_counted() -> None:
    texts = ["x" * 300] * 10_000  # ~100 tokens each, estimated
    start = counted_from(texts, 4096)
    counted = len(texts) - start
    each = 100 + MESSAGE_OVERHEAD
    assert COUNTED_CONTEXTS * 4096 // each - 2 <= counted <= COUNTED_CONTEXTS * 4096 // each + 2
    assert counted_from(texts[:20], 4096) == 0  # a short chat: all of it
    assert counted_from(texts, None) == 0  # no context known: all of it
    assert counted_from([], 4096) == 0


def one_chat(messages: int) -> bytes:
    """A Parley export of one chat of `messages` messages, each different (counted once)."""
    items, parent = [], None
    for m in range(messages):
        words = " ".join(f"word{m}-{i}" for i in range(40))
        role = "user" if m % 2 == 0 else "assistant"
        items.append({"id": f"m{m}", "parent_id": parent, "content": words, "role": role,
                      "created_at": 1.0 + m})  # fmt: skip
        parent = f"m{m}"
    chat = {"id": "c", "title": "long", "created_at": 1.0, "updated_at": 1.0, "messages": items}
    return json.dumps({"format": "parley", "version": 1, "conversations": [chat]}).encode()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_long_chats_meter_asks_the_engine_for_a_few_counts(data_dir: Path) -> None:
    server = Parley(data_dir, local=LocalSettings(n_ctx=2048)).start()
    try:
        wait_model_ready(server)
        reply = post(server.port, server.token, one_chat(3_000))
        assert reply.status in (200, 201), reply.body
        (chat,) = server.call("GET", "/api/conversations").json()["conversations"]
        meter = server.call("GET", f"/api/conversations/{chat['id']}/context").json()
        assert meter["messages"] == 3_000
        assert meter["estimated"]  # the oldest messages were estimated, and it says so
        assert meter["used"] > 3_000 * 40  # every message is in the figure
        # The engine was asked for what two contexts' worth hold (~4,096 tokens of ~120-token
        # messages, estimated high), not for 3,000 counts.
        counted = len(backend(server)._counts._counts)
        assert 10 <= counted <= 100
    finally:
        server.stop()
