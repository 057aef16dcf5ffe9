"""The desktop app as its user drives it: send, Stop, close, reopen."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from desktop.app import App
from desktop.client import ParleyClient
from desktop.embedded import launch_settings
from desktop.settings.config import DesktopConfig
from tests.desktop.conftest import GuiApp, run
from tests.support.parley import MODEL
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
    assert "first token" in text and "ms" in text  # time to first token
    assert "tok/s" in text and "8 tokens" in text
    assert gui.window.composer.text == ""
    assert gui.window.composer.button.text() == "Send"
    sidebar = gui.window.sidebar.list
    # Listed a moment after the reply started (LIST_AFTER_START_MS).
    qtbot.waitUntil(
        lambda: [sidebar.item(i).text() for i in range(sidebar.count())] == ["Hello there"]
    )


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
    # Reopened as it was at the close, without a click.
    qtbot.waitUntil(lambda: "t0 t1 t2" in second.transcript_text(), timeout=10_000)
    assert "Stopped" in second.transcript_text()
    qtbot.waitUntil(lambda: sidebar.currentRow() == 0, timeout=5_000)


def test_a_new_chat_at_quit_is_a_new_chat_at_launch(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    first = gui_factory()
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(first.window.reply_finished, timeout=10_000):
        first.send("Something")
    qtbot.keyClick(first.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    first.close()

    second = gui_factory()
    qtbot.waitUntil(lambda: not second.window.tasks, timeout=5_000)  # nothing being opened
    assert second.window.sidebar.list.count() == 1
    assert second.window.current_id is None
    # A new chat: its welcome page, with the model that will answer.
    qtbot.waitUntil(lambda: "ready" in second.transcript_text(), timeout=5_000)
    assert second.window.transcript.welcome_shown and "Something" not in second.transcript_text()


def _dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.Base, "#1b1b1d"),
        (QPalette.ColorRole.Text, "#e8e8e8"),
        (QPalette.ColorRole.WindowText, "#e8e8e8"),
    ):
        palette.setColor(role, QColor(colour))
    return palette


CODE_REPLY = ["Here:\n\n", "```python\n", "x = 1\n", "```\n"]


def test_a_system_switch_to_dark_redraws_the_open_conversation(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, qapp: QApplication
) -> None:
    upstream.script = Script(texts=CODE_REPLY)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Show code")
    assert "#f4f4f4" in gui.window.transcript.toHtml()  # the light code background
    light = qapp.palette()
    try:
        # The second reply is still streaming when the theme flips: redrawn at once, the
        # live reply with it, which goes on streaming and can be stopped.
        upstream.script = Script(texts=CODE_REPLY, stall_after=3)
        gui.send("Again")
        qtbot.waitUntil(lambda: gui.transcript_text().count("x = 1") == 2, timeout=10_000)
        with qtbot.waitSignal(gui.window.transcript.theme_changed, timeout=5_000):
            qapp.setPalette(_dark_palette())
        qtbot.waitUntil(lambda: "#f4f4f4" not in gui.window.transcript.toHtml(), timeout=5_000)
        qtbot.waitUntil(lambda: gui.transcript_text().count("x = 1") == 2, timeout=5_000)
        assert gui.window.transcript.showing_reply
        with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
            gui.window.composer.button.click()
        html = gui.window.transcript.toHtml()
        assert html.count("#272822") >= 2  # both code blocks, dark now
        text = gui.transcript_text()
        assert text.count("Stopped") == 1 and text.count("Again") == 1 and "Show code" in text
    finally:
        qapp.setPalette(light)
    qtbot.waitUntil(lambda: "#272822" not in gui.window.transcript.toHtml(), timeout=5_000)


def test_reopening_a_streaming_conversation_then_stopping_shows_it_once(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=100, stall_after=3)
    gui.send("Keep going")
    qtbot.waitUntil(lambda: "t2" in gui.transcript_text(), timeout=10_000)
    streaming_id = gui.window.current_id
    # Away to a new chat, then back to the one still streaming (from the list).
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 1)  # listed once started
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "Keep going" not in gui.transcript_text(), timeout=5_000)
    gui.window.sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: "Keep going" in gui.transcript_text(), timeout=5_000)
    assert gui.window.current_id == streaming_id

    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.composer.button.click()  # Stop
    qtbot.waitUntil(lambda: "Stopped" in gui.transcript_text(), timeout=5_000)
    text = gui.transcript_text()
    assert text.count("Keep going") == 1 and text.count("t0 t1 t2") == 1, text
    assert text.count("Stopped") == 1


def test_a_message_sent_while_the_last_chat_is_being_reopened_keeps_the_screen(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: Any
) -> None:
    first = gui_factory()
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(first.window.reply_finished, timeout=10_000):
        first.send("The old chat")
    first.close()

    # The relaunch's reopen of "The old chat" is held until a new message has been sent.
    release = asyncio.Event()
    real_conversation = ParleyClient.conversation

    async def held(self: ParleyClient, conversation_id: str) -> Any:
        await release.wait()
        return await real_conversation(self, conversation_id)

    monkeypatch.setattr(ParleyClient, "conversation", held)
    second = gui_factory()
    assert second.window.current_id is None
    with qtbot.waitSignal(second.window.reply_finished, timeout=10_000):
        second.send("A new question")
    release.set()
    qtbot.waitUntil(lambda: not second.window.tasks, timeout=5_000)
    assert "A new question" in second.transcript_text()
    assert "The old chat" not in second.transcript_text()


def test_a_second_window_on_a_data_directory_in_use_says_why_its_server_did_not_start(
    gui: GuiApp, qtbot: Any, data_dir: Any, upstream: ScriptedUpstream
) -> None:
    # `gui` holds the data directory; a second app on it cannot start its server. It says
    # why, and its model line no longer says "starting…"; it still closes cleanly.
    args = ["--data-dir", str(data_dir), "--upstream", upstream.base_url, "--upstream-model", MODEL]
    second = App(launch_settings(args), DesktopConfig.load())
    with qtbot.waitSignal(second.window.error_shown, timeout=20_000) as shown:
        task = asyncio.ensure_future(second.run())
    assert "another Parley is already using" in shown.args[0]
    assert second.window.model_picker.state.text() == "server not running"
    assert second.window.client is None
    second.window.close()
    qtbot.waitUntil(task.done, timeout=15_000)
    assert task.result() == 0
    second.window.deleteLater()
    assert gui.window.client is not None  # the first one is untouched


def test_a_hovered_link_or_a_notice_moves_nothing(gui: GuiApp, qtbot: Any) -> None:
    window = gui.window
    qtbot.waitExposed(window)
    before = window.composer.mapTo(window, window.composer.rect().topLeft())
    window.transcript.link_hovered.emit("https://example.com/a/page")  # its target shown
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "https://example.com/a/page")
    QApplication.processEvents()  # the layout requests it made, if any
    assert window.composer.mapTo(window, window.composer.rect().topLeft()) == before
    window.transcript.link_hovered.emit("")
    window.transcript.code_copied.emit()  # "Copied to the clipboard"
    qtbot.waitUntil(lambda: "Copied" in window.statusBar().currentMessage())
    QApplication.processEvents()
    assert window.composer.mapTo(window, window.composer.rect().topLeft()) == before
