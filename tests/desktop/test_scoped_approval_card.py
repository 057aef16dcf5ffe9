"""How far an allow on the approval card reaches: the whole server for this chat (Alt+W), or
the tool's calls whose path lies under a folder (Alt+U opens the folder, offered as the
call's own; Enter allows). From the keyboard, with the focus back in the message field after
the decision; a folder the call is not in is refused by the server and the card still asks.

The real window and embedded server, the tests' MCP server `t` over stdio trusted "ask"."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop.window.menus import shortcut_rows
from tests.desktop.conftest import GuiApp, calls, danger
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def test_the_whole_server_allowed_for_the_chat_by_keyboard_runs_its_next_calls_unasked(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui, card = asking_gui, asking_gui.window.approval_card
    upstream.queue = [
        Script(tool_calls=[danger("one")]),
        Script(tool_calls=[danger("two")]),
        Script(texts=["Done."]),
    ]
    gui.send("do it twice")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    assert "t's tools" in card.allow_server.toolTip()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(gui.window, Qt.Key.Key_W, Qt.KeyboardModifier.AltModifier)
    assert calls(tool_log) == ["one", "two"]  # the second ran without asking
    assert gui.window.composer.editor.hasFocus()
    keys = {(command, key) for _, command, key in shortcut_rows(gui.window.menus)}
    assert ("Allow the whole server for this chat", "Alt+W") in keys
    assert ("Allow under a folder…", "Alt+U") in keys


def test_a_folder_allowed_by_keyboard_runs_calls_under_it_and_asks_the_rest(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui, card = asking_gui, asking_gui.window.approval_card
    upstream.queue = [
        Script(tool_calls=[danger("/srv/notes/a.md")]),
        Script(tool_calls=[danger("/srv/notes/sub/b.md")]),
        Script(tool_calls=[danger("/srv/notes/../secrets")]),
        Script(texts=["Done."]),
    ]
    gui.send("write my notes")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    qtbot.keyClick(gui.window, Qt.Key.Key_U, Qt.KeyboardModifier.AltModifier)
    scope = card.folder_scope
    qtbot.waitUntil(scope.folder.hasFocus, timeout=5_000)
    assert scope.argument.currentText() == "target"
    assert scope.folder.text() == "/srv/notes"  # the call's own folder, offered
    qtbot.keyClick(scope.folder, Qt.Key.Key_Return)
    # The second ran unasked; the third climbs out of the folder: asked.
    qtbot.waitUntil(lambda: card.isVisible() and "secrets" in card.arguments.toPlainText(),
                    timeout=15_000)  # fmt: skip
    assert calls(tool_log) == ["/srv/notes/a.md", "/srv/notes/sub/b.md"]
    assert not scope.isVisible()  # a new call: the card's own buttons again
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(gui.window, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    assert calls(tool_log) == ["/srv/notes/a.md", "/srv/notes/sub/b.md"]
    assert gui.window.composer.editor.hasFocus()


def test_a_folder_the_call_is_not_in_is_refused_and_the_card_still_asks(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui, card = asking_gui, asking_gui.window.approval_card
    upstream.queue = [Script(tool_calls=[danger("/srv/notes/a.md")]), Script(texts=["Ok."])]
    errors: list[str] = []
    gui.window.waiting.failed.connect(errors.append)
    gui.send("write it")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    qtbot.mouseClick(card.allow_under, Qt.MouseButton.LeftButton)
    card.folder_scope.folder.setText("/srv/other")
    qtbot.mouseClick(card.folder_scope.allow, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
    assert "does not lie under" in errors[0]
    assert card.isVisible() and card.allow_once.isEnabled() and calls(tool_log) == []
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    assert calls(tool_log) == ["/srv/notes/a.md"]


def test_escape_in_the_folder_row_goes_back_to_the_cards_buttons_and_stops_nothing(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui, card = asking_gui, asking_gui.window.approval_card
    upstream.queue = [Script(tool_calls=[danger("/srv/notes/a.md")]), Script(texts=["Ok."])]
    gui.send("write it")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    qtbot.keyClick(gui.window, Qt.Key.Key_U, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(card.folder_scope.folder.hasFocus, timeout=5_000)
    qtbot.keyClick(card.folder_scope.folder, Qt.Key.Key_Escape)
    qtbot.waitUntil(card.allow_under.hasFocus, timeout=5_000)
    assert not card.folder_scope.isVisible()
    assert card.isVisible() and card.call is not None  # still asked: Esc did not stop the reply
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(gui.window, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)
    assert calls(tool_log) == ["/srv/notes/a.md"]
