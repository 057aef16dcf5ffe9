"""False alarms: ordinary turns that only read — list, read, search, the user's documents —
with tools that say they read here (read-only, closed-world) and the user trusted "allow".
The guard must ask nothing beyond the user's trust, though every call after the first
follows text the user did not write. The share of calls that asked is printed (and is 0)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.agent.test_approvals import approvals
from tests.server.guard.suite import Guarded, call, start
from tests.server.library.test_library import add, indexed
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

TURNS = [
    [
        call("g__list_notes"),
        call("g__read_note", name="planted"),
        call("g__read_note", name="todo"),
    ],
    [call("search_documents", query="garden"), call("g__search_notes", query="milk")],
    [call("g__read_note", name="shopping"), call("search_documents", query="meeting")],
    [call("g__search_notes", query="eggs"), call("g__list_notes"), call("g__read_note", name="x")],
]


@pytest.fixture
def guarded(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Guarded]:
    found = start(data_dir, upstream, ToolLog(tmp_path / "guard.log"))
    yield found
    found.parley.stop()


def test_turns_that_only_read_here_are_never_asked_by_the_guard(
    guarded: Guarded, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "garden.md").write_text("The garden needs water on Mondays.", encoding="utf-8")
    (folder / "meeting.md").write_text("The meeting moved to Friday.", encoding="utf-8")
    add(guarded.parley, folder)
    indexed(guarded.parley, 2)
    cid = guarded.conversation(documents=True)
    made = asked = 0
    for turn in TURNS:
        # One call per step, so each one after the first follows a result.
        guarded.upstream.queue = [Script(tokens=0, tool_calls=[c]) for c in turn]
        guarded.upstream.queue.append(Script(texts=["Here is what I found."]))
        stream = guarded.parley.send(cid, "What do my notes say?")
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
        made += len(turn)
        asked += len(approvals(stream))
        ended = {step["id"]: step["status"] for step in stream.steps}
        assert list(ended.values()) == ["completed"] * len(turn), ended
    print(
        f"\nfalse alarms: {asked} of {made} read-only closed-world calls asked ({asked / made:.0%})"
    )
    assert asked == 0
    assert not guarded.acted()
