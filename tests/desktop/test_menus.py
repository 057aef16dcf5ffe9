"""The menu bar: every command is wired, enabled when it can act, and its shortcut triggers
it; Quit mid-reply saves the reply as closing the window does."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication

from desktop.look import scale
from desktop.window.about_dialog import AboutDialog
from desktop.window.menus import shortcut_rows
from desktop.window.shortcuts_dialog import ShortcutsDialog
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream


def every_action(gui: GuiApp) -> list[QAction]:
    found = []
    for menu in gui.window.menus.menus:
        for action in menu.actions():
            if action.menu() is not None:
                found.extend(action.menu().actions())  # the Theme submenu
            elif not action.isSeparator():
                found.append(action)
    return found


def press(qtbot: Any, gui: GuiApp, keys: str) -> None:
    sequence = QKeySequence(keys)
    combo = sequence[0]
    qtbot.keyClick(gui.window.transcript, combo.key(), combo.keyboardModifiers())


def test_every_command_is_wired_and_listed_with_its_keys(gui: GuiApp) -> None:
    actions = every_action(gui)
    titles = [m.title().replace("&", "") for m in gui.window.menus.menus]
    assert titles == ["File", "Edit", "View", "Chat", "Help"]
    assert len(actions) >= 25
    for action in actions:
        assert action.receivers("2triggered(bool)") > 0, action.text()
    rows = shortcut_rows(gui.window.menus)
    commands = {command: keys for _menu, command, keys in rows}
    assert commands["New chat"] == "Ctrl+N" and commands["Quit"].startswith("Ctrl+Q")
    assert "Ctrl+F" in commands["Find in chat"] and commands["Stop the reply"] == "Esc"
    assert "Ctrl+," in commands["Settings"] and commands["Show sidebar"] == "Ctrl+B"
    # No key is bound to two commands (an ambiguous key does nothing).
    bound = [s.toString() for a in actions for s in a.shortcuts()]
    assert len(bound) == len(set(bound))


def test_commands_are_enabled_only_when_they_can_act(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    menus = gui.window.menus
    chat_only = (menus.export_chat, menus.chat_settings, menus.rename, menus.delete)
    assert not any(a.isEnabled() for a in chat_only)
    assert not menus.stop.isEnabled() and not menus.regenerate.isEnabled()

    upstream.script = Script(tokens=100, stall_after=3)
    gui.send("Tell me a long story")
    qtbot.waitUntil(lambda: "t2" in gui.transcript_text(), timeout=10_000)
    assert menus.stop.isEnabled() and all(a.isEnabled() for a in chat_only)
    assert not menus.regenerate.isEnabled() and not menus.continue_.isEnabled()

    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        menus.stop.trigger()
    qtbot.waitUntil(menus.continue_.isEnabled, timeout=5_000)
    assert menus.regenerate.isEnabled() and not menus.stop.isEnabled()

    # Chat → Continue goes on from the stopped reply, as its link does.
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        press(qtbot, gui, "Ctrl+Shift+Return")
    qtbot.waitUntil(lambda: not menus.continue_.isEnabled(), timeout=5_000)
    assert menus.regenerate.isEnabled()
    # … and Regenerate (Ctrl+R) makes a second version.
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        press(qtbot, gui, "Ctrl+R")
    qtbot.waitUntil(lambda: "2/2" in gui.transcript_text(), timeout=5_000)


def body_size(window: Any) -> int:
    look = window.transcript.list.property("look")
    return int(look["type"]["body"])


def test_the_view_keys_act(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any) -> None:
    window = gui.window
    size = window.transcript.font().pointSizeF()
    press(qtbot, gui, "Ctrl+=")
    press(qtbot, gui, "Ctrl+=")
    assert window.view.zoom_level == 2 and window.transcript.font().pointSizeF() > size * 1.15
    body = scale.TYPE["body"]
    assert body_size(window) >= round(body * 1.2)  # the messages' text, drawn by QML, too
    press(qtbot, gui, "Ctrl+-")
    assert window.view.zoom_level == 1
    press(qtbot, gui, "Ctrl+0")
    assert window.view.zoom_level == 0 and window.transcript.font().pointSizeF() == size
    assert body_size(window) == body
    press(qtbot, gui, "Ctrl+B")
    assert window.sidebar.isHidden() and not window.menus.sidebar.isChecked()
    press(qtbot, gui, "Ctrl+B")
    assert not window.sidebar.isHidden()
    press(qtbot, gui, "Ctrl+F")
    assert window.find_bar.isVisible()

    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(window.reply_finished, timeout=10_000):
        gui.send("Hello")
    assert window.current_id is not None
    press(qtbot, gui, "Ctrl+N")
    assert window.current_id is None and window.transcript.welcome_shown
    assert "Hello" not in gui.transcript_text()


def test_help_shows_the_shortcuts_and_about(gui: GuiApp, qtbot: Any, data_dir: Any) -> None:
    press(qtbot, gui, "F1")
    dialog = gui.window.help.dialog
    assert isinstance(dialog, ShortcutsDialog) and dialog.isVisible()
    commands = [dialog.table.item(r, 1).text() for r in range(dialog.table.rowCount())]
    assert "New chat" in commands and "Quit" in commands
    gui.window.menus.about.trigger()
    about = gui.window.help.dialog
    assert isinstance(about, AboutDialog) and about.isVisible()
    text = about.text.text()
    for fact in ("PySide6", "Qt", "xllamacpp", str(data_dir), "Log"):
        assert fact in text
    about.close()


def test_theme_dark_then_system_redraws_and_is_remembered(
    gui_factory: Any, qtbot: Any, qapp: QApplication
) -> None:
    gui = gui_factory()
    system = QPalette(qapp.palette())
    base = system.color(QPalette.ColorRole.Base).lightness()
    try:
        gui.window.menus.themes["dark"].trigger()
        assert qapp.palette().color(QPalette.ColorRole.Base).lightness() < 60
        qtbot.waitUntil(lambda: gui.window.transcript.renderer.dark, timeout=5_000)
        gui.close()
        qapp.setPalette(system)  # as a new process starts, on the system's colours
        again = gui_factory()
        assert again.window.menus.themes["dark"].isChecked()
        again.window.menus.themes["system"].trigger()
        qtbot.waitUntil(lambda: not again.window.transcript.renderer.dark, timeout=5_000)
        assert qapp.palette().color(QPalette.ColorRole.Base).lightness() == base
    finally:
        qapp.setPalette(system)


def test_quit_mid_reply_saves_it_as_closing_does(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    first = gui_factory()
    upstream.script = Script(tokens=100, stall_after=3)
    first.send("Write something long")
    qtbot.waitUntil(lambda: "t2" in first.transcript_text(), timeout=10_000)
    press(qtbot, first, "Ctrl+Q")
    qtbot.waitUntil(first.task.done, timeout=15_000)
    upstream.wait_hung_up()
    second = gui_factory()
    qtbot.waitUntil(lambda: "t0 t1 t2" in second.transcript_text(), timeout=10_000)
    client = second.window.client
    assert client is not None
    conversation = run(qtbot, client.conversation(second.window.current_id or ""))
    reply = conversation["messages"][-1]
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")


def test_a_message_has_its_actions_in_a_context_menu(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=3)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Hello")
    view = gui.window.transcript
    question = next(i for i in view.rows.ids() if view.message_text(i) == "Hello")
    menu = view.menu_of(question)
    labels = [a.text() for a in menu.actions()]
    assert "Copy message" in labels and "Edit message" in labels
    next(a for a in menu.actions() if a.text() == "Edit message").trigger()
    assert gui.window.composer.text == "Hello"
    menu.close()


def test_a_new_chat_shows_the_model_examples_and_where_things_are(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    from PySide6.QtCore import QUrl

    window = gui.window
    qtbot.waitUntil(lambda: "ready" in gui.transcript_text(), timeout=10_000)
    text = gui.transcript_text()
    assert window.model_picker.current() in text and "Try one" in text
    assert "Settings" in text and "Library" in text
    with qtbot.waitSignal(window.settings_requested, timeout=2_000):
        window.transcript.open_link(QUrl("open:settings"))
    window.help.dialog = None
    # An example is sent as a message; the page gives way to the chat.
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(window.reply_finished, timeout=10_000):
        window.transcript.open_link(QUrl("prompt:0"))
    assert "hash table" in gui.transcript_text() and "Try one" not in gui.transcript_text()
    assert not window.transcript.welcome_shown
