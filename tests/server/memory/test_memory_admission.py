"""A turn is admitted with the system message it will be given, memory included: a memory
that leaves the local model's context no room for the question is a 400 before anything is
written, as a too long question is, not an error after the turn opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.parley import Parley

pytestmark = pytest.mark.slow


def test_a_memory_the_context_cannot_hold_is_refused_before_the_turn(
    local_parley: Parley, data_dir: Path
) -> None:
    path = data_dir / "memory" / "global.md"
    path.parent.mkdir(parents=True)
    # ~10,000 tokens under the 64 KiB bound; the bundled model's context holds 2,048.
    path.write_text("".join(f"- {'hello ' * 20}{n}\n" for n in range(480)), encoding="utf-8")
    cid = local_parley.new_conversation()
    reply = local_parley.call(
        "POST", f"/api/conversations/{cid}/messages", json_body={"content": "hi"}
    )
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "context_length_exceeded"
    assert local_parley.conversation(cid)["messages"] == []  # nothing written

    path.write_text("- The user likes tea.\n", encoding="utf-8")
    stream = local_parley.send(cid, "Say hi.", max_tokens=4)
    stream.read_all()
    assert stream.final["parley"]["status"] == "completed"
