"""Long tool calls in the window (issue 41): a running step's line shows what its tool says of
its progress and for how long it has run, ticking in place (only the step's lines are drawn
again); a call past its timeout asks on a card, Keep waiting / Stop this call, reachable from
the keyboard, while its step says it waits for the user."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.desktop.conftest import GuiApp, run, with_tools
from tests.desktop.test_approval_card import typing_goes_to_the_composer
from tests.support.tools import ToolLog, tool_server, write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def tools_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    return with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": f"t__{name}", "arguments": json.dumps(arguments)}


def seconds_shown(gui: GuiApp) -> int | None:
    """The time the running step's line says it has run."""
    found = re.search(r"running… (\d+) s", gui.transcript_text())
    return int(found.group(1)) if found else None


def test_a_running_steps_line_shows_its_progress_as_it_comes(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    upstream.queue = [
        Script(tokens=0, tool_calls=[tool("progressing", steps=4, pause=0.4, tag="p")]),
        Script(texts=["All done."]),
    ]
    seen: list[str] = []
    gui.window.transcript.textChanged.connect(lambda: seen.append(gui.transcript_text()))
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.send("go")
    lines = [line for text in seen for line in text.splitlines() if "progressing(" in line]
    assert any(re.search(r"running… \d+ s · step 1 of 4 · 25%", line) for line in lines), lines
    assert any("step 3 of 4 · 75%" in line for line in lines), lines
    assert "progressing(" in gui.transcript_text() and "— done in" in gui.transcript_text()
    assert "step 4 of 4" not in gui.transcript_text()  # a step that ended says how it went


def test_a_running_steps_time_ticks_redrawing_only_its_line(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    upstream.queue = [Script(texts=["Waiting a while. "], tool_calls=[tool("slow", seconds=30)])]
    gui.send("wait")
    qtbot.waitUntil(lambda: seconds_shown(gui) is not None, timeout=15_000)
    view = gui.window.transcript
    reply = view.rows.row(view.rows.ids()[-1])
    assert reply is not None and reply.blocks is not None
    blocks = reply.blocks
    line_at = next(i for i, block in enumerate(blocks.blocks) if block.kind == "step")
    changes: list[int] = []
    blocks.dataChanged.connect(lambda first, _last, *_: changes.append(first.row()))
    first = seconds_shown(gui)
    assert first is not None
    qtbot.waitUntil(lambda: (seconds_shown(gui) or 0) >= first + 2, timeout=5_000)
    # Each tick drew the step's line again, and nothing above it.
    assert changes and min(changes) >= line_at
    assert "Waiting a while." in gui.transcript_text()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.menus.stop.trigger()
    assert seconds_shown(gui) is None and "— stopped" in gui.transcript_text()


@pytest.fixture
def impatient_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    """The tests' MCP server, with `slow` asked about after 1 s."""
    entry = {**tool_server(tool_log.path), "toolTimeout": {"slow": 1}}
    write_config(data_dir / "mcp.json", {"t": entry})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


def test_a_call_past_its_timeout_asks_on_a_card_and_the_keyboard_answers(
    impatient_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = impatient_gui
    card = gui.window.overdue_card
    upstream.queue = [
        Script(tokens=0, tool_calls=[tool("slow", seconds=60, tag="o")]),
        Script(texts=["I stopped waiting."]),
    ]
    gui.send("go")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    assert "<b>slow</b>" in card.title.text() and "has been running for 1 s" in card.title.text()
    assert "slow(seconds=60" in gui.transcript_text()
    qtbot.waitUntil(lambda: "— waiting for you · running" in gui.transcript_text(), timeout=2_000)
    qtbot.waitUntil(lambda: "running for 2 s" in card.title.text(), timeout=3_000)  # counting
    assert tool_log.find("cancelled", tag="o") is None  # asked, not cut

    # Keep waiting, from the keyboard: the card has the focus, on its gentler answer.
    assert card.keep_waiting.hasFocus()
    qtbot.keyClick(card.keep_waiting, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=5_000)
    qtbot.waitUntil(lambda: "waiting for you" not in gui.transcript_text(), timeout=5_000)
    assert tool_log.find("cancelled", tag="o") is None

    # Asked again a timeout later: Tab to Stop this call.
    qtbot.waitUntil(card.isVisible, timeout=10_000)
    qtbot.keyClick(card.keep_waiting, Qt.Key.Key_Tab)
    assert card.stop_call.hasFocus()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        qtbot.keyClick(card.stop_call, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: bool(tool_log.find("cancelled", tag="o")), timeout=5_000)
    assert not card.isVisible()
    text = gui.transcript_text()
    assert re.search(r"slow\(seconds=60, tag=\"o\"\) — stopped by you after \d+ s", text), text
    assert "I stopped waiting." in text  # the turn went on


def test_after_an_answer_on_the_long_call_card_typing_goes_to_the_composer(
    impatient_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    """Keep waiting (Alt+K) hands the keys to the message field; asked again while the user
    types there, the card leaves them (a Space would have answered it); Stop this call,
    clicked, hands them back too."""
    gui = impatient_gui
    card, editor = gui.window.overdue_card, gui.window.composer.editor
    upstream.queue = [
        Script(tokens=0, tool_calls=[tool("slow", seconds=60, tag="o")]),
        Script(texts=["I stopped waiting."]),
    ]
    gui.send("go")
    qtbot.waitUntil(card.keep_waiting.hasFocus, timeout=15_000)
    qtbot.keyClick(gui.window, Qt.Key.Key_K, Qt.KeyboardModifier.AltModifier)
    typing_goes_to_the_composer(gui, qtbot, " half")
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=5_000)  # answered

    # Asked again a timeout later, while the user's words are in the message field.
    qtbot.waitUntil(lambda: card.isVisible() and card.keep_waiting.isEnabled(), timeout=10_000)
    assert editor.hasFocus()
    qtbot.keyClicks(editor, " a thought")
    assert card.isVisible() and editor.toPlainText() == " half a thought"
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        qtbot.mouseClick(card.stop_call, Qt.MouseButton.LeftButton)
        assert editor.hasFocus()
    assert tool_log.find("cancelled", tag="o") is not None
