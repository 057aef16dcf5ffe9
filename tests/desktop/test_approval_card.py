"""The approval card: a call that needs the user's approval shows its tool, server and whole
arguments; Allow once / Allow for this chat / Deny reach the server; Stop while it waits
ends the turn and the tool never runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.window.menus import shortcut_rows
from tests.desktop.conftest import GuiApp, calls, danger, run, with_tools
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def stored_reply(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    reply: dict[str, Any] = run(qtbot, client.conversation(gui.window.current_id))["messages"][-1]
    return reply


def test_allow_once_runs_the_call_and_deny_tells_the_model(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [
        Script(tool_calls=[danger("the garden")]),
        Script(tool_calls=[danger("the house")]),
        Script(texts=["Done."]),
    ]
    gui.send("do it")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    assert "danger" in card.title.text() and "<b>t</b>" in card.title.text()
    assert json.loads(card.arguments.toPlainText()) == {"target": "the garden"}
    assert calls(tool_log) == []  # nothing runs before the user says so
    assert 'danger(target="the garden") — awaiting approval' in gui.transcript_text()
    qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    # (Waiting on Qt's loop: the decision is sent from it.)
    qtbot.waitUntil(lambda: tool_log.find("call", target="the garden"), timeout=10_000)

    # The next call asks again (allowed once); Deny: never run, the model is told.
    qtbot.waitUntil(lambda: card.isVisible() and "house" in card.arguments.toPlainText(),
                    timeout=15_000)  # fmt: skip
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.deny, Qt.MouseButton.LeftButton)
    assert not card.isVisible()
    assert calls(tool_log) == ["the garden"]
    told = upstream.records[-1].body["messages"][-1]
    assert told["role"] == "tool" and "denied" in told["content"].lower()
    steps = [p["status"] for p in stored_reply(gui, qtbot)["parts"] if p["type"] == "tool"]
    assert steps == ["completed", "denied"]


def test_allow_for_this_chat_stops_asking_in_this_chat_only(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [
        Script(tool_calls=[danger("one")]),
        Script(tool_calls=[danger("two")]),
        Script(texts=["Done."]),
    ]
    gui.send("do it twice")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_chat, Qt.MouseButton.LeftButton)
    assert calls(tool_log) == ["one", "two"]  # the second ran without asking

    # A new chat asks again.
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    upstream.queue = [Script(tool_calls=[danger("three")]), Script(texts=["Ok."])]
    gui.send("and here")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    assert calls(tool_log) == ["one", "two"]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    assert calls(tool_log) == ["one", "two", "three"]


def test_stop_while_a_call_waits_ends_the_turn_and_the_tool_never_runs(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [Script(texts=["Let me. "], tool_calls=[danger("everything")])]
    gui.send("do it")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    notes = gui.ending_notes()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.menus.stop.trigger()
    # While it was being saved, the view said which call never ran.
    assert notes[0] == "Stopped before t · danger was allowed to run — saving…"
    assert not card.isVisible()
    reply = stored_reply(gui, qtbot)
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
    step = next(p for p in reply["parts"] if p["type"] == "tool")
    assert step["status"] == "interrupted" and "Not run" in (step["result"] or "")
    # A late click changes nothing: the card is gone, the tool never ran.
    assert calls(tool_log) == []


def test_closing_the_window_while_a_call_waits_saves_the_turn_and_runs_nothing(
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    qtbot: Any,
) -> None:
    first = with_tools(gui_factory, data_dir, tool_log, qtbot, trust=None)
    upstream.queue = [Script(texts=["Let me. "], tool_calls=[danger("everything")])]
    first.send("do it")
    qtbot.waitUntil(first.window.approval_card.isVisible, timeout=15_000)
    first.close()
    assert calls(tool_log) == []

    second: GuiApp = gui_factory()
    qtbot.waitUntil(lambda: "Let me." in second.transcript_text(), timeout=10_000)
    reply = stored_reply(second, qtbot)
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
    step = next(p for p in reply["parts"] if p["type"] == "tool")
    assert step["status"] == "interrupted"
    assert not second.window.approval_card.isVisible() and calls(tool_log) == []


def test_the_card_is_answered_by_keyboard_without_stealing_typing(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    """Issue 43 item 3: the card takes the focus when it appears (unless the user is typing),
    Tab goes Allow once → Allow for this chat → the whole server → under a folder → Deny,
    Alt+A/T/D answer it, F1 lists them."""
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [
        Script(tool_calls=[danger("the shed")]),
        # A second's pause before the next call: the user starts typing meanwhile.
        Script(tool_calls=[danger("the barn")], first_delay=1.0),
        Script(texts=["Done."]),
    ]
    gui.send("do it")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=5_000)
    assert card.allow_once.nextInFocusChain() is card.allow_chat
    assert card.allow_chat.nextInFocusChain() is card.allow_server
    assert card.allow_server.nextInFocusChain() is card.allow_under
    assert card.allow_under.nextInFocusChain() is card.deny
    qtbot.keyClick(gui.window, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)  # Allow once
    qtbot.waitUntil(lambda: bool(tool_log.find("call", target="the shed")), timeout=10_000)

    # The next call comes while the user types: their field keeps the focus; Alt+D denies.
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=10_000)  # answered
    composer = gui.window.composer
    composer.focus()
    qtbot.keyClicks(composer.editor, "half a thought")
    assert not card.isVisible()  # typed before the next call asked
    qtbot.waitUntil(lambda: card.isVisible() and "barn" in card.arguments.toPlainText(),
                    timeout=15_000)  # fmt: skip
    assert composer.editor.hasFocus()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.keyClick(gui.window, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    assert calls(tool_log) == ["the shed"]
    assert composer.editor.toPlainText() == "half a thought"
    keys = {(command, key) for _, command, key in shortcut_rows(gui.window.menus)}
    assert {("Allow once", "Alt+A"), ("Allow for this chat", "Alt+T"), ("Deny", "Alt+D")} <= keys


def typing_goes_to_the_composer(gui: GuiApp, qtbot: Any, words: str) -> None:
    """Keys typed now land in the message field (a Space on a button, "New chat" say, would
    press it and take the rest of the typing elsewhere)."""
    chats = gui.window.sidebar.list.count()
    focused = QApplication.focusWidget()
    assert focused is not None
    qtbot.keyClicks(focused, words)
    assert gui.window.composer.editor.toPlainText() == words
    assert gui.window.sidebar.list.count() == chats and gui.window.current_id is not None


@pytest.mark.parametrize(
    "answer",
    ["Alt+A", "Alt+T", "Alt+D", "click Allow once", "click Allow for this chat", "click Deny"],
)
def test_after_a_decision_typing_goes_to_the_composer(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any, answer: str
) -> None:
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [Script(tool_calls=[danger("the shed")]), Script(texts=["Done."])]
    gui.send("do it")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    if answer.startswith("Alt+"):
        key = {"A": Qt.Key.Key_A, "T": Qt.Key.Key_T, "D": Qt.Key.Key_D}[answer[-1]]
        qtbot.keyClick(gui.window, key, Qt.KeyboardModifier.AltModifier)
    else:
        button = {"Allow once": card.allow_once, "Allow for this chat": card.allow_chat,
                  "Deny": card.deny}[answer.removeprefix("click ")]  # fmt: skip
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    typing_goes_to_the_composer(gui, qtbot, " and then")
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=10_000)
    assert gui.window.composer.editor.hasFocus()  # still, once the card is gone


def test_a_card_that_goes_away_while_it_has_the_keys_gives_them_to_the_composer(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    """Decided elsewhere (another client of the server) while the card has the focus: hidden,
    it hands the keys back instead of leaving them to the next widget in the chain."""
    gui = asking_gui
    card = gui.window.approval_card
    upstream.queue = [Script(tool_calls=[danger("the shed")]), Script(texts=["Done."])]
    gui.send("do it")
    qtbot.waitUntil(card.allow_once.hasFocus, timeout=15_000)
    client, call = gui.window.client, card.call
    assert client is not None and call is not None and gui.window.current_id is not None
    run(qtbot, client.decide_tool_call(gui.window.current_id, call["call_id"], "allow", "once"))
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=10_000)
    typing_goes_to_the_composer(gui, qtbot, " next")
    qtbot.waitUntil(lambda: bool(tool_log.find("call", target="the shed")), timeout=10_000)
