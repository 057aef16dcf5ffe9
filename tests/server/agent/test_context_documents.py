"""The context meter counts the passages "Use my documents" will put in the next prompt
(issue 42): the room they may take, as an estimate, once the chat's switch is on and the
library has a folder."""

from __future__ import annotations

from pathlib import Path

from server.routes.context import documents_room
from tests.server.library.test_library import add, indexed
from tests.support.parley import Parley


def meter(parley: Parley, cid: str) -> dict[str, object]:
    reply = parley.call("GET", f"/api/conversations/{cid}/context")
    assert reply.status == 200, reply.body
    found: dict[str, object] = reply.json()
    return found


def test_the_meter_counts_the_room_of_the_documents_the_next_turn_is_given(
    parley: Parley, tmp_path: Path
) -> None:
    cid = parley.new_conversation(documents=True)
    alone = meter(parley, cid)
    assert alone["documents"] == 0  # no folder: no passage is put in the prompt

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "herons.md").write_text("# Herons\n\nHerons wade.\n", encoding="utf-8")
    add(parley, tmp_path / "docs")
    indexed(parley, files=1)
    on = meter(parley, cid)
    assert on["documents"] == documents_room() > 3 * 2_000 // 3  # three passages at most
    assert on["estimated"] is True
    assert on["used"] == on["system"] + on["history"] + on["tools"] + on["documents"]

    off = parley.new_conversation(documents=False)
    assert meter(parley, off)["documents"] == 0
