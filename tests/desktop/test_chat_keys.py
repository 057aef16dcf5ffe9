"""Moving about the chats (issue 43): a search hit in the chat already open, the keys for the
next and previous chat, the search and the message box (listed in F1), Edit's cursor, and a
rename that keeps the chat where it is in the list."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.window.menus import shortcut_rows
from tests.desktop.conftest import GuiApp, run
from tests.desktop.test_sidebar import chat, titles
from tests.desktop.test_versions import click
from tests.support.upstream import Script, ScriptedUpstream


def new_chat(gui: GuiApp, qtbot: Any) -> None:
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)


def test_a_search_hit_in_the_chat_already_open_shows_the_words_found(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["Basalt is dark. " * 40, "Obsidian is glass."])
    chat(gui, qtbot, "Tell me about rocks")
    transcript = gui.window.transcript
    transcript.clear_found()
    sidebar = gui.window.sidebar
    sidebar.search.setText("obsidian")
    qtbot.waitUntil(lambda: sidebar.searching() and titles(gui) == ["Tell me about rocks"])
    row = sidebar.list.item(0)
    assert row.isSelected()  # the chat open: choosing it changes no selection
    assert transcript.found_words == ""
    position = sidebar.list.visualItemRect(row).center()
    qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=position)
    assert transcript.found_words.casefold() == "obsidian"

    transcript.clear_found()
    sidebar.list.setFocus()
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Return)  # the keyboard's way to choose it
    assert transcript.found_words.casefold() == "obsidian"


def test_keys_go_to_the_next_and_previous_chat_the_search_and_the_message_box(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=1)
    for title in ("Third", "Second", "First"):
        chat(gui, qtbot, title)
        new_chat(gui, qtbot)
    assert titles(gui) == ["First", "Second", "Third"]
    window = gui.window

    def key(name: str, modifiers: Any = Qt.KeyboardModifier.ControlModifier) -> None:
        qtbot.keyClick(window.composer.editor, name, modifiers)

    key(Qt.Key.Key_PageDown)  # from a new chat: the first of the list
    qtbot.waitUntil(lambda: "First" in gui.transcript_text())
    key(Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: "Second" in gui.transcript_text())
    key(Qt.Key.Key_Tab)  # Ctrl+Tab too
    qtbot.waitUntil(lambda: "Third" in gui.transcript_text())
    key(Qt.Key.Key_PageDown)  # the last stays
    assert window.sidebar.list.currentRow() == 2
    key(Qt.Key.Key_PageUp)
    qtbot.waitUntil(lambda: "Second" in gui.transcript_text())

    window.menus.sidebar.trigger()  # hidden: the search brings it back
    assert window.sidebar.isHidden()
    key(Qt.Key.Key_K)
    assert not window.sidebar.isHidden() and window.menus.sidebar.isChecked()
    assert QApplication.focusWidget() is window.sidebar.search
    qtbot.keyClick(window.sidebar.search, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.composer.editor

    listed = {(menu, command) for menu, command, _keys in shortcut_rows(window.menus)}
    for command in ("Next chat", "Previous chat", "Search chats", "Type a message"):
        assert ("View", command) in listed  # in F1's list of keys


def test_edit_puts_the_cursor_at_the_end_of_the_question(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(texts=["Granite."])
    chat(gui, qtbot, "Name a rock that is\nused for kitchen counters")
    client = gui.window.client
    assert client is not None
    conversation = run(qtbot, client.conversation(gui.window.current_id or ""))
    click(gui, "edit", conversation["messages"][0]["id"])
    editor = gui.window.composer.editor
    assert editor.toPlainText().endswith("kitchen counters")
    assert editor.textCursor().position() == len(editor.toPlainText())


def test_renaming_a_chat_keeps_its_place_in_the_list(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=1)
    chat(gui, qtbot, "Older")
    new_chat(gui, qtbot)
    chat(gui, qtbot, "Newer")
    sidebar = gui.window.sidebar.list
    sidebar.setCurrentRow(1)
    qtbot.waitUntil(lambda: "Older" in gui.transcript_text())
    qtbot.keyClick(gui.window, Qt.Key.Key_F2)
    editor = sidebar.focusWidget()
    assert editor is not None and editor is not sidebar
    editor.selectAll()  # type: ignore[attr-defined]
    qtbot.keyClicks(editor, "Renamed")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Renamed" in titles(gui), timeout=5_000)
    qtbot.waitUntil(lambda: not gui.window.tasks, timeout=5_000)
    assert titles(gui) == ["Newer", "Renamed"]
    client = gui.window.client
    assert client is not None
    assert [c["title"] for c in run(qtbot, client.conversations())] == ["Newer", "Renamed"]
