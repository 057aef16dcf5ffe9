"""Replies as a new user meets them: a reply per chat (Stop ends the reply of the chat on
screen, never another's); Esc stops it from anywhere in the window; focus and Tab behave as in
any text field; links, Copy, the composer's size, the longest reply."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox

from desktop.look.palette import palette as look_palette
from desktop.look.theme import is_dark
from desktop.settings.config import DEFAULT_MAX_TOKENS, DesktopConfig
from server.models.bundled import BUNDLED_MODEL_NAME
from tests.desktop.conftest import GuiApp, run
from tests.support.parley import MODEL
from tests.support.upstream import Script, ScriptedUpstream


def stored(gui: GuiApp, qtbot: Any, conversation_id: str) -> list[dict[str, Any]]:
    client = gui.window.client
    assert client is not None
    messages: list[dict[str, Any]] = run(qtbot, client.conversation(conversation_id))["messages"]
    return messages


def start_reply(gui: GuiApp, qtbot: Any, upstream: ScriptedUpstream, text: str) -> str:
    """Send `text` in a new chat; return its id once 3 tokens are on screen (then stalled)."""
    upstream.script = Script(texts=[f"{text}-0 ", f"{text}-1 ", f"{text}-2 "] + ["x "] * 97,
                             stall_after=3)  # fmt: skip
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    gui.send(text)
    qtbot.waitUntil(lambda: f"{text}-2" in gui.transcript_text(), timeout=10_000)
    assert gui.window.current_id is not None
    return gui.window.current_id


def test_each_chat_has_its_own_reply_and_stop(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    first = start_reply(gui, qtbot, upstream, "alpha")
    # A second chat: its own Send (not the first chat's Stop), and its message goes.
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert gui.window.composer.button.text() == "Send"
    gui.send("beta")
    qtbot.waitUntil(lambda: gui.window.current_id not in (None, first), timeout=5_000)
    second = gui.window.current_id
    assert gui.window.composer.button.text() == "Stop"
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() == 2, timeout=5_000)
    assert sidebar.busy_shown() == {first, second}

    # Stop here ends this chat's reply (waiting for the model behind the first) only.
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.composer.button.click()
    assert "Stopped" in gui.transcript_text()
    assert gui.window.composer.button.text() == "Send"
    assert stored(gui, qtbot, second or "")[-1]["ended_by"] == "client_hangup"
    assert stored(gui, qtbot, first)[-1]["status"] == "streaming"

    # Back to the first chat: its live reply at once, still Stop-able, and it stops.
    gui.window.sidebar.list.setCurrentRow(
        next(i for i in range(2) if sidebar.list.item(i).data(Qt.ItemDataRole.UserRole) == first)
    )
    qtbot.waitUntil(lambda: gui.window.current_id == first, timeout=5_000)
    assert gui.window.transcript.showing_reply  # live, not a stored copy
    qtbot.waitUntil(lambda: "alpha-2" in gui.transcript_text(), timeout=1_000)
    assert gui.window.composer.button.text() == "Stop"
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.composer.button.click()
    assert stored(gui, qtbot, first)[-1]["ended_by"] == "client_hangup"
    assert gui.transcript_text().count("Stopped") == 1


def test_escape_stops_from_the_sidebar_and_from_the_transcript(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    for target in (gui.window.sidebar.list, gui.window.transcript):
        start_reply(gui, qtbot, upstream, "gamma")
        target.setFocus()
        with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
            qtbot.keyClick(target, Qt.Key.Key_Escape)
        assert "Stopped" in gui.transcript_text()


def test_focus_returns_to_the_composer_after_stop(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    start_reply(gui, qtbot, upstream, "delta")
    button = gui.window.composer.button
    button.setFocus()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert gui.window.composer.editor.hasFocus()


def test_tab_moves_focus_out_of_the_composer(gui: GuiApp, qtbot: Any) -> None:
    editor = gui.window.composer.editor
    editor.setFocus()
    gui.window.composer.set_text("no tabs here")
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert gui.window.composer.text == "no tabs here"
    assert not editor.hasFocus()


def test_the_window_title_names_the_open_chat(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    assert gui.window.windowTitle() == "Parley"
    upstream.script = Script(tokens=1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Plans for Sunday")
    qtbot.waitUntil(lambda: gui.window.windowTitle() == "Plans for Sunday — Parley")
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert gui.window.windowTitle() == "Parley"


def test_a_reply_is_capped_at_the_longest_reply_setting(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Short")
    assert upstream.records[-1].body["max_tokens"] == DEFAULT_MAX_TOKENS


def test_links_open_in_the_browser_only_after_their_target_is_shown(
    gui: GuiApp, qtbot: Any, monkeypatch: Any
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    view = gui.window.transcript
    hovered: list[str] = []
    view.link_hovered.connect(hovered.append)
    view.list.linkHovered.emit("https://example.org/page")  # type: ignore[attr-defined]
    assert gui.window.statusBar().currentMessage() == "https://example.org/page"

    for url in ("file:///etc/passwd", "javascript:alert(1)", "relative/path"):
        view.link_activated.emit(url)  # never followed, nothing asked
    assert gui.window.findChild(QMessageBox, "open-link") is None

    view.link_activated.emit("https://example.org/page")
    ask = gui.window.findChild(QMessageBox, "open-link")
    assert ask is not None and ask.informativeText() == "https://example.org/page"
    ask.button(QMessageBox.StandardButton.Open).click()
    assert opened == ["https://example.org/page"]


def test_copying_a_code_block_says_so(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, qapp: Any
) -> None:
    upstream.script = Script(texts=["```python\n", "x = 1\n", "```\n"])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Code please")
    html = " ".join(
        block.html
        for row_id in gui.window.transcript.rows.ids()
        for block in gui.window.transcript.rows.blocks_of(row_id)
    )
    link = re.findall(r'href="(copy:\d+)"', html)[-1]
    gui.window.transcript.link_activated.emit(link)
    assert qapp.clipboard().text().strip() == "x = 1"
    assert gui.window.statusBar().currentMessage() == "Copied to the clipboard"


def test_the_composer_grows_with_its_text_up_to_a_limit(gui: GuiApp) -> None:
    composer = gui.window.composer
    one = composer.editor.height()
    composer.set_text("\n".join(["line"] * 5))
    five = composer.editor.height()
    composer.set_text("\n".join(["line"] * 50))
    fifty = composer.editor.height()
    assert one < five < fifty == composer.editor.maximumHeight()
    composer.set_text("\n".join(["line"] * 80))
    assert composer.editor.height() == fifty  # capped: it scrolls from there


def test_the_model_picker_belongs_to_the_open_chat_and_new_chats_use_the_default(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    picker = gui.window.model_picker
    client = gui.window.client
    assert client is not None
    local = next(m["name"] for m in run(qtbot, client.status())["models"] if m["kind"] == "local")
    qtbot.waitUntil(lambda: picker.current() == MODEL)  # the server's default: --upstream

    def pick(name: str) -> None:
        qtbot.waitUntil(lambda: picker.combo.findText(name) >= 0, timeout=5_000)
        picker.combo.setCurrentIndex(picker.combo.findText(name))
        picker.combo.activated.emit(picker.combo.currentIndex())

    upstream.script = Script(tokens=1)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("First chat")
    first = gui.window.current_id or ""
    pick(local)  # while the chat is open: that chat's model, on the server
    qtbot.waitUntil(lambda: run(qtbot, client.conversation(first))["model"] == local)

    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert picker.current() == MODEL  # a new chat: the default, not the last chat's model
    pick(local)  # on a new chat: for that chat only, not a default (issue 39)
    qtbot.waitUntil(lambda: gui.window.sidebar.list.count() == 1)  # listed after its reply began
    gui.window.sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == first)
    assert picker.current() == local
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert picker.current() == MODEL
    # "Set as default": the server's default from now on; new chats start on it.
    pick(local)
    assert picker.default_button.isEnabled()
    picker.default_button.click()
    qtbot.waitUntil(lambda: run(qtbot, client.status())["default_model"] == local)
    qtbot.waitUntil(lambda: not picker.default_button.isEnabled())
    gui.window.sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == first)
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert picker.current() == local


def test_keyboard_focus_is_plain_to_see(gui: GuiApp, qtbot: Any) -> None:
    """The composer's box draws a 2 px ring in the accent while its words have the focus."""
    box = gui.window.composer.box
    gui.window.activateWindow()
    gui.window.sidebar.search.setFocus()
    qtbot.waitUntil(gui.window.sidebar.search.hasFocus)
    accent = look_palette(is_dark(gui.window.palette())).accent
    left = box.mapTo(gui.window, box.rect().topLeft())
    middle = left.y() + box.height() // 2

    def ring() -> list[str]:
        image = gui.window.grab().toImage()
        return [image.pixelColor(left.x() + dx, middle).name() for dx in range(3)]

    assert accent not in ring()
    gui.window.composer.editor.setFocus()
    qtbot.waitUntil(gui.window.composer.editor.hasFocus)
    drawn = ring()
    assert drawn[:2] == [accent, accent] and drawn[2] != accent  # 2 px, not 1


def test_each_chat_keeps_what_was_typed_in_it_and_not_sent(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=3)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("first chat")
    chat = gui.window.current_id
    assert chat is not None and gui.window.composer.text == ""
    qtbot.keyClicks(gui.window.composer.editor, "half a thought for the first chat")
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert gui.window.composer.text == ""  # a new chat: nothing typed in it yet
    qtbot.keyClicks(gui.window.composer.editor, "one for a new chat")

    gui.window.sidebar.conversation_selected.emit(chat)  # back to the first chat
    qtbot.waitUntil(lambda: gui.window.current_id == chat, timeout=5_000)
    assert gui.window.composer.text == "half a thought for the first chat"
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert gui.window.composer.text == "one for a new chat"


def test_a_message_sent_then_left_is_no_draft_of_its_chat(qtbot: Any) -> None:
    from desktop.composer.composer import Composer

    composer = Composer()
    qtbot.addWidget(composer)
    composer.set_text("sent just now")
    composer.switch_chat("a", "b")  # left before its reply began
    assert composer.text == ""
    composer.drop_draft("a", "sent just now")  # the reply began: it was no draft
    composer.switch_chat("b", "a")
    assert composer.text == ""


def test_an_earlier_versions_default_model_becomes_the_servers_default(
    gui_factory: Any, qtbot: Any
) -> None:
    # An earlier version kept the last model picked on a new chat in its own config.
    config = DesktopConfig.load()
    config.default_model = BUNDLED_MODEL_NAME
    config.save()
    gui = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["default_model"] == BUNDLED_MODEL_NAME)
    qtbot.waitUntil(lambda: DesktopConfig.load().default_model == "")  # moved, once
    # The new chat's page follows the default as it changes.
    qtbot.waitUntil(lambda: gui.window.model_picker.current() == BUNDLED_MODEL_NAME)


def test_a_message_to_a_model_still_loading_shows_at_once_with_a_note(
    gui: GuiApp, qtbot: Any
) -> None:
    picker = gui.window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(BUNDLED_MODEL_NAME))
    status = picker.current_status()
    assert status is not None and status["state"] == "unloaded"  # loads on first use
    gui.window.max_tokens = 4
    note = f"Loading {BUNDLED_MODEL_NAME}…"
    with qtbot.waitSignal(gui.window.reply_finished, timeout=60_000):
        gui.send("Hello there")
        # The question is drawn before its turn begins (the engine starts first: ~0.3-2.6
        # s), with what it waits on where the reply will come; no chat is made known yet.
        qtbot.waitUntil(lambda: note in gui.transcript_text(), timeout=5_000)
        assert "Hello there" in gui.transcript_text() and gui.window.current_id is None
        assert not gui.window.transcript.welcome_shown
    # The reply's first text took the note's place; the question is drawn once.
    text = gui.transcript_text()
    assert note not in text and text.splitlines().count("Hello there") == 1  # drawn once
    assert gui.window.current_id is not None
    # Drawn again with its ids once its turn began: the question's and the reply's actions.
    actions = gui.window.transcript.last_actions()
    assert "regenerate" in actions
