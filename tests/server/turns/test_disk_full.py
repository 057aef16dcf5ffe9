"""A disk that fills mid-reply: what was delivered is kept in memory and written once there
is room again, streaming or settled; a settled reply is never left `streaming`.
The data dir is a small tmpfs of its own (tests/support/small_disk.py), filled and emptied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.database import stored_status
from tests.support.parley import Parley
from tests.support.small_disk import SmallDisk, mounted_small_disk
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true

pytestmark = pytest.mark.slow

TOKEN_CHARS = 100  # 150 tokens: 15,000 characters, as in the report that found this


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    yield from mounted_small_disk(tmp_path)


@pytest.fixture
def server(small_disk: SmallDisk, upstream: ScriptedUpstream) -> Iterator[Parley]:
    parley = Parley(small_disk.root / "data", upstream.base_url).start()
    yield parley
    parley.stop()


def test_a_reply_settled_on_a_full_disk_is_saved_when_space_returns(
    server: Parley, small_disk: SmallDisk, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=150, token_chars=TOKEN_CHARS, rate=100)
    conversation_id, stream = begun_then_full(server, small_disk)
    message_id = stream.first["message_id"]
    db_path = server.settings.db_path

    stream.read_all()
    delivered = stream.delivered
    assert len(delivered) == 150 * TOKEN_CHARS
    final = stream.final["parley"]
    assert final["status"] == "completed"
    assert "disk is full" in final["save_error"], final
    assert stored_status(db_path, message_id)[0] == "streaming"  # not on disk yet
    # Meanwhile the chat says why it takes no new message.
    refused = server.call("POST", f"/api/conversations/{conversation_id}/messages",
                          json_body={"content": "again"})  # fmt: skip
    assert refused.status == 409 and refused.json()["error"]["code"] == "reply_not_saved"

    small_disk.free()
    saved = server.settled(conversation_id, message_id).json()
    assert (saved["status"], saved["content"]) == ("completed", delivered)
    server.wait_idle()


def test_what_came_while_the_disk_was_full_is_checkpointed_when_space_returns(
    server: Parley, small_disk: SmallDisk, upstream: ScriptedUpstream
) -> None:
    """No more text need come: the reply waits (a silent upstream, a long tool call) and what
    was delivered reaches the disk anyway, so a crash then would lose none of it."""
    upstream.script = Script(tokens=300, token_chars=TOKEN_CHARS, rate=100, stall_after=150)
    conversation_id, stream = begun_then_full(server, small_disk)
    message_id = stream.first["message_id"]
    db_path = server.settings.db_path

    delivered = stream.read_until(lambda text: len(text) == 150 * TOKEN_CHARS)
    # The checkpoints since the disk filled fail: the disk holds less than was delivered,
    # also after the last delta's checkpoint was tried (ten checkpoint intervals).
    stays_true(lambda: len(stored_status(db_path, message_id)[1]) < len(delivered), 1.0)
    small_disk.free()
    server.wait_for(lambda: stored_status(db_path, message_id) == ("streaming", delivered))
    # The client was told when the writes began to fail, and when they worked again.
    stream.read_until(lambda _: problems(stream)[-1:] == [None])
    said = problems(stream)
    assert len(said) == 2 and "disk is full" in str(said[0]), said

    stream.hang_up()
    saved = server.wait_settled(conversation_id, message_id)
    assert (saved["status"], saved["content"]) == ("interrupted", delivered)


def begun_then_full(server: Parley, small_disk: SmallDisk) -> tuple[str, Any]:
    """A reply begun, some of it on disk, and then the disk full: its chat and its stream."""
    conversation_id = server.new_conversation()
    stream = server.send(conversation_id)
    message_id = stream.first["message_id"]
    stream.read_until(lambda text: len(text) >= 10 * TOKEN_CHARS)
    db_path = server.settings.db_path
    server.wait_for(lambda: len(stored_status(db_path, message_id)[1]) >= TOKEN_CHARS)
    small_disk.fill()
    return conversation_id, stream


def problems(stream: Any) -> list[str | None]:
    """The `parley.save_problem` events the stream has brought so far."""
    return [
        event["parley"]["save_problem"]
        for event in stream.events
        if isinstance(event, dict) and "save_problem" in event.get("parley", {})
    ]
