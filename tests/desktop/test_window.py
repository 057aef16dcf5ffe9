"""The desktop app as its user drives it: send, Stop, close, reopen."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream


def test_send_streams_a_reply_and_shows_its_figures(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=8)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello there")
    text = gui.transcript_text()
    assert "Hello there" in text
    assert upstream.script.text().strip() in text
    assert "tok/s" in text and "8 tokens" in text
    assert gui.window.composer.text == ""
    assert gui.window.composer.button.text() == "Send"
    titles = [
        gui.window.sidebar.list.item(i).text() for i in range(gui.window.sidebar.list.count())
    ]
    assert titles == ["Hello there"]


def test_stop_mid_reply_marks_it_at_once_and_keeps_what_was_shown(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    gui.send("Tell me a long story")
    qtbot.waitUntil(lambda: "t2" in gui.transcript_text(), timeout=10_000)
    assert gui.window.composer.button.text() == "Stop"

    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000) as finished:
        qtbot.mouseClick(gui.window.composer.button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "Stopped" in gui.transcript_text(), timeout=1_000)
    upstream.wait_hung_up()
    message_id = finished.args[0]
    client = gui.window.client
    assert client is not None
    conversation = run(qtbot, client.conversation(gui.window.current_id or ""))
    saved = next(m for m in conversation["messages"] if m["id"] == message_id)
    assert saved["content"].startswith("t0 t1 t2 ")
    assert (saved["status"], saved["ended_by"]) == ("interrupted", "client_hangup")
    assert "Stopped" in gui.transcript_text()
    status = run(qtbot, client.status())
    assert not status["models"][0]["in_use"] and status["active_turns"] == 0

    # The model is free for the next message.
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Another one")
    assert "t0 t1" in gui.transcript_text()


def test_escape_stops_too(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any) -> None:
    upstream.script = Script(tokens=100, stall_after=2)
    gui.send("Go")
    qtbot.waitUntil(lambda: "t1" in gui.transcript_text(), timeout=10_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        qtbot.keyClick(gui.window.composer.editor, Qt.Key.Key_Escape)
    upstream.wait_hung_up()
    assert "Stopped" in gui.transcript_text()


def test_shift_enter_adds_a_line_instead_of_sending(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui.window.composer.set_text("first line")
    editor = gui.window.composer.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert gui.window.composer.text == "first line\n"
    assert upstream.records == []


def test_closing_mid_reply_saves_it_and_a_new_app_shows_it_stopped(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    first = gui_factory()
    upstream.script = Script(tokens=100, stall_after=3)
    first.send("Write something long")
    qtbot.waitUntil(lambda: "t2" in first.transcript_text(), timeout=10_000)
    first.close()
    upstream.wait_hung_up()

    second = gui_factory()
    sidebar = second.window.sidebar.list
    assert sidebar.count() == 1
    sidebar.setCurrentRow(0)
    qtbot.waitUntil(lambda: "t0 t1 t2" in second.transcript_text(), timeout=10_000)
    assert "Stopped" in second.transcript_text()
