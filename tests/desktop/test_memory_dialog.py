"""The memory dialog: a scope's lines with the chat each came from (a link that opens it),
Forget (the file on disk changes), Edit with a save refused over a file changed on disk (the
user's text kept), a file Parley will not read said as the server says it, Delete all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.memory import controller as memory_controller
from desktop.memory.dialog import MemoryDialog
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing")


def memory_file(data_dir: Path) -> Path:
    return data_dir / "memory" / "global.md"


def open_memory(gui: GuiApp, qtbot: Any) -> MemoryDialog:
    """The memory of the chats outside projects, from the button over the list."""
    gui.window.sidebar.scope.memory_button.click()
    dialog = gui.window.findChild(MemoryDialog, "memory-dialog")
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.memory is not None, timeout=5_000)
    return dialog


def line_texts(dialog: MemoryDialog) -> list[str]:
    return [row.text.text() for row in dialog.lines.rows]


def a_chat(gui: GuiApp, qtbot: Any, upstream: ScriptedUpstream, text: str) -> str:
    upstream.script = Script(tokens=2)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send(text)
    chat_id = gui.window.current_id
    assert chat_id is not None
    return chat_id


def test_the_lines_show_with_their_chats_and_a_link_opens_one(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, data_dir: Path
) -> None:
    plums = a_chat(gui, qtbot, upstream, "About plums")
    gui.window.new_chat()
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text(
        f"# Memory\n- Likes plums. <!-- chat:{plums} -->\n- Lives in Porto.\n"
    )
    dialog = open_memory(gui, qtbot)
    assert line_texts(dialog) == ["# Memory", "Likes plums.", "Lives in Porto."]
    sources = [row.source.text() for row in dialog.lines.rows]
    assert "From “About plums”" in sources[1] and f"chat:{plums}" in sources[1]
    assert sources[0] == sources[2] == "Written by hand"
    assert dialog.path.text() == str(memory_file(data_dir))

    with qtbot.waitSignal(gui.window.conversation_opened, timeout=5_000):
        dialog.lines.rows[1].source.linkActivated.emit(f"chat:{plums}")
    assert gui.window.current_id == plums
    # The window stays usable beside it: the chat opened is there to read.
    assert dialog.isVisible() and dialog.windowModality() == Qt.WindowModality.NonModal


def test_forget_removes_the_line_from_the_file(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, data_dir: Path
) -> None:
    chat_id = a_chat(gui, qtbot, upstream, "About pears")
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text(f"- Likes pears. <!-- chat:{chat_id} -->\n- Keeps bees.\n")
    dialog = open_memory(gui, qtbot)
    dialog.lines.rows[0].forget.click()
    qtbot.waitUntil(lambda: line_texts(dialog) == ["Keeps bees."], timeout=5_000)
    assert memory_file(data_dir).read_text() == "- Keeps bees.\n"
    assert dialog.message.text() == "Forgotten."


def test_a_save_over_a_file_changed_on_disk_keeps_the_users_text(
    gui: GuiApp, qtbot: Any, data_dir: Path
) -> None:
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text("- Old line.\n")
    dialog = open_memory(gui, qtbot)
    dialog.edit_button.click()
    assert dialog.editing() and dialog.editor.toPlainText() == "- Old line.\n"
    dialog.editor.setPlainText("- Typed in Parley.\n")
    memory_file(data_dir).write_text("- Saved in another editor.\n")  # meanwhile, by hand
    dialog.save_button.click()
    qtbot.waitUntil(lambda: "changed on disk" in dialog.message.text(), timeout=5_000)
    assert dialog.editing() and dialog.editor.toPlainText() == "- Typed in Parley.\n"
    assert memory_file(data_dir).read_text() == "- Saved in another editor.\n"  # untouched
    assert line_texts(dialog) == ["Saved in another editor."]  # what is on disk now

    dialog.save_button.click()  # over the version read again: the user's text wins now
    qtbot.waitUntil(lambda: not dialog.editing(), timeout=5_000)
    assert memory_file(data_dir).read_text() == "- Typed in Parley.\n"
    assert line_texts(dialog) == ["Typed in Parley."]


def test_a_save_past_the_bound_says_the_servers_reason_and_keeps_the_text(
    gui: GuiApp, qtbot: Any, data_dir: Path
) -> None:
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text("- Small.\n")
    dialog = open_memory(gui, qtbot)
    dialog.edit_button.click()
    huge = "- " + "x" * 70_000 + "\n"
    dialog.editor.setPlainText(huge)
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.message.text() not in ("", "Saving…"), timeout=5_000)
    assert "longer than" in dialog.message.text()  # the server's own words
    assert dialog.editing() and dialog.editor.toPlainText() == huge
    assert memory_file(data_dir).read_text() == "- Small.\n"
    assert not gui.window.banner.isVisible()


def test_a_file_parley_will_not_read_is_said_not_crashed_on(
    gui: GuiApp, qtbot: Any, data_dir: Path
) -> None:
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_bytes(b"- fine\n\x00\x01 binary")
    dialog = open_memory(gui, qtbot)
    assert "Parley does not read this file" in dialog.message.text()
    assert "binary" in dialog.message.text()
    assert not dialog.edit_button.isEnabled() and dialog.open_button.isEnabled()
    assert line_texts(dialog) == []
    assert memory_file(data_dir).read_bytes() == b"- fine\n\x00\x01 binary"


def test_open_in_editor_opens_the_servers_path(
    gui: GuiApp, qtbot: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(memory_controller, "open_file", lambda path: opened.append(path) or True)
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text("- A line.\n")
    dialog = open_memory(gui, qtbot)
    dialog.open_button.click()
    assert opened == [str(memory_file(data_dir))]


def test_delete_all_asks_then_turns_memory_off(gui: GuiApp, qtbot: Any, data_dir: Path) -> None:
    memory_file(data_dir).parent.mkdir(parents=True, exist_ok=True)
    memory_file(data_dir).write_text("- A line.\n")
    dialog = open_memory(gui, qtbot)
    dialog.delete_button.click()
    asking = dialog.findChild(QMessageBox, "confirm-delete-memory")
    assert asking is not None
    asking.button(QMessageBox.StandardButton.Cancel).click()
    assert memory_file(data_dir).exists()

    dialog.delete_button.click()
    qtbot.waitUntil(lambda: dialog.findChild(QMessageBox, "confirm-delete-memory") is not None)
    asking = dialog.findChild(QMessageBox, "confirm-delete-memory")
    asking.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: dialog.memory is not None and not dialog.memory["exists"])
    assert not memory_file(data_dir).exists()
    assert dialog.turn_on_button.isVisibleTo(dialog)

    dialog.turn_on_button.click()
    qtbot.waitUntil(lambda: memory_file(data_dir).exists(), timeout=5_000)


def test_a_projects_memory_is_its_own_file(gui: GuiApp, qtbot: Any, data_dir: Path) -> None:
    client = gui.window.client
    assert client is not None
    project = run(qtbot, client.projects.create("Orchard"))
    run(qtbot, gui.window.projects.refresh())
    gui.window.projects.open_memory(project["id"])
    dialog = gui.window.findChild(MemoryDialog, "memory-dialog")
    assert dialog is not None and dialog.windowTitle() == "Memory — Orchard"
    qtbot.waitUntil(lambda: dialog.memory is not None, timeout=5_000)
    dialog.turn_on_button.click()
    path = data_dir / "memory" / "projects" / f"{project['id']}.md"
    qtbot.waitUntil(path.exists, timeout=5_000)
    assert not memory_file(data_dir).exists()
