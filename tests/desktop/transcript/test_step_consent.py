"""A tool step's card says why the injection guard asked before the call and who let it run
under which scope — live, and the same when the chat is opened again (both are saved with
the step)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.transcript.step_view import step_view
from tests.desktop.conftest import GuiApp, run
from tests.desktop.transcript.test_view import items, text_of
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

PART: dict[str, Any] = {
    "type": "tool", "id": "c1", "server": "g", "name": "write_file",
    "arguments": '{"path": "/srv/notes/a.md"}', "status": "completed", "result": "ok",
    "started_at": 1.0, "ended_at": 2.0,
}  # fmt: skip


@pytest.mark.parametrize(
    ("allowed", "words"),
    [
        ({"by": "you", "scope": "once"}, "Allowed by you: this call only"),
        ({"by": "you", "scope": "chat"}, "Allowed by you: this tool, for this chat"),
        ({"by": "grant", "scope": "server"}, "Allowed by your earlier allow: all of g's tools"),
        (
            {"by": "grant", "scope": "arguments", "argument": "path", "under": "/srv/notes"},
            "write_file's calls with path under /srv/notes, for this chat",
        ),
        ({"by": "trust", "scope": "always"}, "Ran without asking: its trust in the settings"),
    ],
)
def test_a_step_says_who_let_it_run_and_how_far(allowed: dict[str, str], words: str) -> None:
    view = step_view({**PART, "allowed": allowed})  # type: ignore[typeddict-item]
    assert words in view.allowed
    assert words in view.text  # what Find and the chat's text read
    assert step_view(PART).allowed == "" and step_view(PART).reason == ""  # type: ignore[arg-type]


def test_a_step_the_guard_held_says_why(qtbot: Any) -> None:
    guard = {"reason": "This call comes after the model read X.", "sources": []}
    view = step_view({**PART, "guard": guard})  # type: ignore[typeddict-item]
    assert view.reason == "Parley asked because: This call comes after the model read X."


@pytest.mark.parametrize(
    "kept",
    [{"allowed": "yes", "guard": "why"}, {"allowed": {"scope": 3}, "guard": {"reason": None}},
     {"allowed": ["you"], "guard": []}],
)  # fmt: skip
def test_an_imported_steps_odd_keys_say_nothing_and_break_nothing(kept: dict[str, Any]) -> None:
    view = step_view({**PART, **kept})  # type: ignore[typeddict-item]
    assert (view.allowed, view.reason) == ("", "")


def shown(gui: GuiApp, name: str) -> list[str]:
    return sorted(text_of(item) for item in items(gui.window.transcript, name))


@pytest.mark.slow
def test_a_reopened_chat_shows_why_the_guard_asked_and_who_allowed_each_call(
    gui_factory: Any, data_dir: Path, tool_log: ToolLog, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    # Its tools say nothing of what they do: after the first result, the guard asks.
    write_config(data_dir / "mcp.json", {"t": tool_server(tool_log.path, guard=True)})
    first: GuiApp = gui_factory()
    client = first.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    call = {"name": "t__danger", "arguments": json.dumps({"target": "x"})}
    upstream.queue = [
        Script(tool_calls=[call]),
        Script(tool_calls=[{**call, "arguments": json.dumps({"target": "y"})}]),
        Script(texts=["Done."]),
    ]
    first.send("do it twice")
    card = first.window.approval_card
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    assert "which you did not write" in card.reason.text()
    with qtbot.waitSignal(first.window.reply_finished, timeout=15_000):
        card.allow_once.click()
    qtbot.waitUntil(lambda: len(shown(first, "stepAllowed")) == 2, timeout=10_000)
    live = (shown(first, "stepReason"), shown(first, "stepAllowed"))
    first.close()

    second: GuiApp = gui_factory()
    qtbot.waitUntil(lambda: len(shown(second, "stepAllowed")) == 2, timeout=15_000)
    reasons, allowed = shown(second, "stepReason"), shown(second, "stepAllowed")
    assert (reasons, allowed) == live
    (reason,) = reasons  # the second call only: the first came before any result
    assert reason.startswith("Parley asked because: This call comes after the model read")
    assert allowed == [
        "Allowed by you: this call only",
        "Ran without asking: its trust in the settings is Always allow",
    ]
