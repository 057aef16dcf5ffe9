"""A disk that fills mid-reply: what was delivered is kept in memory and written once there
is room again, streaming or settled; a settled reply is never left `streaming`.

The data dir is a small tmpfs of its own, filled by a file of the test's and emptied again:
the database meets a real ENOSPC (SQLite's SQLITE_FULL), as on a user's full disk."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.database import stored_status
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream
from tests.support.waiting import stays_true

pytestmark = pytest.mark.slow

TOKEN_CHARS = 100  # 150 tokens: 15,000 characters, as in the report that found this


class SmallDisk:
    """A tmpfs mounted for the test; `fill()` takes every free byte, `free()` gives it back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        block = b"\0" * 65_536
        with open(self.filler, "ab") as out:
            try:
                while True:
                    out.write(block)
                    out.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
        # The last bytes a buffered write could not place: fill them one by one.
        fd = os.open(self.filler, os.O_WRONLY | os.O_APPEND)
        try:
            while True:
                os.write(fd, b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    root = tmp_path / "disk"
    root.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(root)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


@pytest.fixture
def server(small_disk: SmallDisk, upstream: ScriptedUpstream) -> Iterator[Parley]:
    parley = Parley(small_disk.root / "data", upstream.base_url).start()
    yield parley
    parley.stop()


def test_a_reply_settled_on_a_full_disk_is_saved_when_space_returns(
    server: Parley, small_disk: SmallDisk, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=150, token_chars=TOKEN_CHARS, rate=100)
    conversation_id = server.new_conversation()
    stream = server.send(conversation_id)
    message_id = stream.first["message_id"]
    db_path = server.settings.db_path
    # Something is on disk before the disk fills.
    stream.read_until(lambda text: len(text) >= 10 * TOKEN_CHARS)
    server.wait_for(lambda: len(stored_status(db_path, message_id)[1]) >= TOKEN_CHARS)
    small_disk.fill()

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
    conversation_id = server.new_conversation()
    stream = server.send(conversation_id)
    message_id = stream.first["message_id"]
    db_path = server.settings.db_path
    stream.read_until(lambda text: len(text) >= 10 * TOKEN_CHARS)
    server.wait_for(lambda: len(stored_status(db_path, message_id)[1]) >= TOKEN_CHARS)
    small_disk.fill()

    delivered = stream.read_until(lambda text: len(text) == 150 * TOKEN_CHARS)
    # The checkpoints since the disk filled fail: the disk holds less than was delivered,
    # also after the last delta's checkpoint was tried (ten checkpoint intervals).
    stays_true(lambda: len(stored_status(db_path, message_id)[1]) < len(delivered), 1.0)
    small_disk.free()
    server.wait_for(lambda: stored_status(db_path, message_id) == ("streaming", delivered))

    stream.hang_up()
    saved = server.wait_settled(conversation_id, message_id)
    assert (saved["status"], saved["content"]) == ("interrupted", delivered)
