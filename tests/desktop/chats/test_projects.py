"""The sidebar's projects: made, opened (a new chat lands in it), renamed, its instructions and
folders saved, a chat moved out and in, deleted asking what becomes of its chats, a search
within it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QInputDialog, QMenu, QMessageBox

from desktop.chats.project_dialog import ProjectDialog
from desktop.client import ParleyClient
from tests.desktop.conftest import GuiApp, run
from tests.support.upstream import Script, ScriptedUpstream

# A context menu pops up offscreen, where nothing grabs or raises.
pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing")


def titles(gui: GuiApp) -> list[str]:
    rows = gui.window.sidebar.list
    return [rows.item(i).text() for i in range(rows.count())]


def project_names(gui: GuiApp) -> list[str]:
    rows = gui.window.sidebar.projects.list
    return [rows.item(i).text() for i in range(rows.count())]


def client_of(gui: GuiApp) -> ParleyClient:
    client = gui.window.client
    assert client is not None
    return client


def chat(gui: GuiApp, qtbot: Any, text: str) -> None:
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send(text)
    qtbot.waitUntil(lambda: text in titles(gui), timeout=5_000)


def new_project(gui: GuiApp, qtbot: Any, name: str) -> str:
    """Made as a user does (the + by "Projects", a name, OK); its id, once it is open."""
    window = gui.window
    window.sidebar.projects.new_button.click()
    asking = window.findChild(QInputDialog, "new-project-name")
    assert asking is not None and asking.isVisible()
    asking.setTextValue(name)
    asking.accept()
    qtbot.waitUntil(lambda: window.sidebar.projects.name_of(window.chat_list.project) == name)
    project_id = window.chat_list.project
    assert project_id is not None
    return project_id


def project_menu(gui: GuiApp, name: str) -> QMenu:
    panel = gui.window.sidebar.projects
    row = project_names(gui).index(name)
    position = panel.list.visualItemRect(panel.list.item(row)).center()
    panel.list.customContextMenuRequested.emit(position)
    menu = panel.findChild(QMenu, "project-menu")
    assert menu is not None and menu.isVisible()
    return menu


def choose(menu: QMenu, text: str) -> None:
    action = next(a for a in menu.actions() if a.text().replace("&&", "&") == text)
    action.trigger()
    menu.hide()


def chat_menu(gui: GuiApp, title: str) -> QMenu:
    rows = gui.window.sidebar.list
    item = rows.item(titles(gui).index(title))
    rows.customContextMenuRequested.emit(rows.chat_rect(item).center())
    menu = gui.window.sidebar.findChild(QMenu, "conversation-menu")
    assert menu is not None and menu.isVisible()
    return menu


def move_to(gui: GuiApp, title: str, target: str) -> None:
    menu = chat_menu(gui, title)
    moves = menu.findChild(QMenu, "move-to-project")
    assert moves is not None
    choose(moves, target)
    menu.hide()


def test_a_new_project_opens_and_a_new_chat_starts_in_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    chat(gui, qtbot, "Outside chat")
    project_id = new_project(gui, qtbot, "Garden")
    assert project_names(gui) == ["Garden"]
    qtbot.waitUntil(lambda: titles(gui) == [], timeout=5_000)  # its chats: none yet
    assert gui.window.sidebar.scope.title.text() == "Garden"
    said = gui.window.sidebar.no_results
    assert said.isVisibleTo(gui.window.sidebar) and "No chats in “Garden” yet" in said.text()

    gui.window.new_chat()
    chat(gui, qtbot, "Tomatoes")
    client = client_of(gui)
    inside = run(qtbot, client.projects.chats(project_id))
    assert [c["title"] for c in inside] == ["Tomatoes"]
    assert not said.isVisibleTo(gui.window.sidebar)
    outside = run(qtbot, client.projects.chats(None))
    assert [c["title"] for c in outside] == ["Outside chat"]
    qtbot.waitUntil(lambda: gui.window.sidebar.projects.project(project_id)["chats"] == 1)  # type: ignore[index]

    # Closed again (chosen once more): the list shows the chats outside every project.
    panel = gui.window.sidebar.projects
    panel.list.itemClicked.emit(panel.list.item(0))
    qtbot.waitUntil(lambda: titles(gui) == ["Outside chat"], timeout=5_000)
    assert gui.window.sidebar.scope.title.text() == "Chats"


def test_a_chat_moves_out_of_a_project_and_back_in(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    project_id = new_project(gui, qtbot, "Thesis")
    chat(gui, qtbot, "Chapter one")
    client = client_of(gui)

    errors: list[str] = []
    gui.window.error_shown.connect(errors.append)
    move_to(gui, "Chapter one", "No project")
    qtbot.waitUntil(lambda: titles(gui) == [] or bool(errors), timeout=5_000)
    assert not errors
    assert run(qtbot, client.projects.chats(project_id)) == []
    assert [c["title"] for c in run(qtbot, client.projects.chats(None))] == ["Chapter one"]

    panel = gui.window.sidebar.projects
    panel.list.itemClicked.emit(panel.list.item(0))  # closed: the chats outside
    qtbot.waitUntil(lambda: titles(gui) == ["Chapter one"], timeout=5_000)
    move_to(gui, "Chapter one", "Thesis")
    qtbot.waitUntil(lambda: titles(gui) == [], timeout=5_000)
    inside = run(qtbot, client.projects.chats(project_id))
    assert [c["title"] for c in inside] == ["Chapter one"]


def test_a_chat_dragged_onto_a_project_moves_into_it(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    chat(gui, qtbot, "Dragged")
    client = client_of(gui)
    project = run(qtbot, client.projects.create("Target"))
    run(qtbot, gui.window.projects.refresh())
    qtbot.waitUntil(lambda: titles(gui) == ["Dragged"], timeout=5_000)  # (outside)
    rows = gui.window.sidebar.list
    dragged = rows.mimeData([rows.item(0)])  # what a drag of its row carries
    target = gui.window.sidebar.projects.list
    at = QPointF(target.visualItemRect(target.item(0)).center())
    drop = QDropEvent(at, Qt.DropAction.MoveAction, dragged, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)  # fmt: skip
    target.dropEvent(drop)
    qtbot.waitUntil(lambda: titles(gui) == [], timeout=5_000)
    inside = run(qtbot, client.projects.chats(project["id"]))
    assert [c["title"] for c in inside] == ["Dragged"]


def test_a_chat_opened_from_elsewhere_opens_its_project_in_the_sidebar(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    project_id = new_project(gui, qtbot, "Elsewhere")
    chat(gui, qtbot, "Inside it")
    chat_id = gui.window.current_id
    assert chat_id is not None
    gui.window.projects.open_project(None)  # the chats outside: it is not among the rows
    gui.window.new_chat()
    qtbot.waitUntil(lambda: titles(gui) == [], timeout=5_000)
    gui.window.projects.chat_chosen.emit(chat_id)  # as a memory line's link does
    qtbot.waitUntil(lambda: gui.window.current_id == chat_id, timeout=5_000)
    qtbot.waitUntil(lambda: titles(gui) == ["Inside it"], timeout=5_000)
    assert gui.window.chat_list.project == project_id
    assert gui.window.sidebar.list.currentItem().text() == "Inside it"


def test_the_chat_restored_at_launch_opens_its_project(
    gui_factory: Any, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    """At launch the list shows every chat until the projects are read; then only the chats
    outside them: the chat restored on screen must not drop out of the sidebar."""
    upstream.script = Script(tokens=2)
    first = gui_factory()
    project_id = new_project(first, qtbot, "Stories")
    chat(first, qtbot, "Inside it")
    chat_id = first.window.current_id
    first.close()

    again = gui_factory()
    qtbot.waitUntil(lambda: again.window.current_id == chat_id, timeout=10_000)
    qtbot.waitUntil(lambda: again.window.chat_list.project == project_id, timeout=10_000)
    qtbot.waitUntil(lambda: titles(again) == ["Inside it"], timeout=5_000)


def test_a_project_is_renamed_and_its_instructions_and_folders_saved(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    project_id = new_project(gui, qtbot, "Trip")
    choose(project_menu(gui, "Trip"), "Rename…")
    asking = gui.window.findChild(QInputDialog, "rename-project")
    assert asking is not None and asking.textValue() == "Trip"
    asking.setTextValue("Trip to Lisbon")
    asking.accept()
    qtbot.waitUntil(lambda: project_names(gui) == ["Trip to Lisbon"], timeout=5_000)
    assert gui.window.sidebar.scope.title.text() == "Trip to Lisbon"

    notes = tmp_path / "notes"
    notes.mkdir()
    choose(project_menu(gui, "Trip to Lisbon"), "Instructions & folders…")
    dialog = gui.window.findChild(ProjectDialog, "project-dialog")
    assert dialog is not None and dialog.name.text() == "Trip to Lisbon"
    dialog._choose = lambda _parent: str(notes)  # the system's folder dialog, answered
    dialog.add_button.click()
    assert dialog.folder_paths() == [str(notes)]
    dialog.instructions.setPlainText("Answer in Portuguese.")
    dialog.buttons.accepted.emit()
    qtbot.waitUntil(lambda: gui.window.findChild(ProjectDialog, "project-dialog") is None)
    project = run(qtbot, client_of(gui).projects.all())[0]
    assert project["id"] == project_id
    assert project["instructions"] == "Answer in Portuguese."
    assert project["folders"] == [str(notes.resolve())]


def test_a_refused_folder_keeps_the_dialog_open_with_the_users_text(
    gui: GuiApp, qtbot: Any
) -> None:
    new_project(gui, qtbot, "Trip")
    choose(project_menu(gui, "Trip"), "Instructions & folders…")
    dialog = gui.window.findChild(ProjectDialog, "project-dialog")
    assert dialog is not None
    dialog.folders.addItem("relative/path")
    dialog.instructions.setPlainText("Keep me")
    dialog.buttons.accepted.emit()
    qtbot.waitUntil(lambda: "absolute" in dialog.message.text(), timeout=5_000)
    assert dialog.isVisible() and dialog.instructions.toPlainText() == "Keep me"


def test_a_folder_that_may_hold_secrets_is_added_only_when_saved_again(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    hidden = tmp_path / ".private"
    hidden.mkdir()
    new_project(gui, qtbot, "Careful")
    choose(project_menu(gui, "Careful"), "Instructions & folders…")
    dialog = gui.window.findChild(ProjectDialog, "project-dialog")
    assert dialog is not None
    dialog._choose = lambda _parent: str(hidden)
    dialog.add_button.click()
    dialog.buttons.accepted.emit()
    qtbot.waitUntil(lambda: "Save again to add it anyway" in dialog.message.text())
    assert run(qtbot, client_of(gui).projects.all())[0]["folders"] == []  # nothing yet
    dialog.buttons.accepted.emit()
    qtbot.waitUntil(lambda: gui.window.findChild(ProjectDialog, "project-dialog") is None)
    assert run(qtbot, client_of(gui).projects.all())[0]["folders"] == [str(hidden.resolve())]


def test_deleting_a_project_asks_what_becomes_of_its_chats(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    new_project(gui, qtbot, "Kept")
    chat(gui, qtbot, "Stays")
    choose(project_menu(gui, "Kept"), "Delete…")
    qtbot.waitUntil(lambda: gui.window.findChild(QMessageBox, "confirm-delete-project") is not None)
    asking = gui.window.findChild(QMessageBox, "confirm-delete-project")
    assert "“Kept” holds 1 chat." in asking.text()
    keep = asking.findChild(object, "delete-project-keep-chats")
    assert keep is not None
    keep.click()
    qtbot.waitUntil(lambda: project_names(gui) == [], timeout=5_000)
    qtbot.waitUntil(lambda: titles(gui) == ["Stays"], timeout=5_000)  # outside now

    gui.window.new_chat()
    new_project(gui, qtbot, "Dropped")
    chat(gui, qtbot, "Goes")
    choose(project_menu(gui, "Dropped"), "Delete…")
    qtbot.waitUntil(lambda: gui.window.findChild(QMessageBox, "confirm-delete-project") is not None)
    asking = gui.window.findChild(QMessageBox, "confirm-delete-project")
    drop = asking.findChild(object, "delete-project-and-chats")
    drop.click()
    qtbot.waitUntil(lambda: project_names(gui) == [], timeout=5_000)
    qtbot.waitUntil(lambda: titles(gui) == ["Stays"], timeout=5_000)
    assert gui.window.current_id is None  # the chat on screen went with it
    listed = run(qtbot, client_of(gui).conversations())
    assert [c["title"] for c in listed] == ["Stays"]


def test_a_search_looks_in_the_open_project_unless_told_otherwise(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    chat(gui, qtbot, "Plums outside")
    gui.window.new_chat()
    new_project(gui, qtbot, "Orchard")
    chat(gui, qtbot, "Plums inside")
    sidebar = gui.window.sidebar
    assert not sidebar.scope.within.isVisibleTo(sidebar)  # (no search yet)
    sidebar.search.setText("Plums")
    assert sidebar.scope.within.isVisibleTo(sidebar) and sidebar.scope.within.isChecked()
    qtbot.waitUntil(lambda: titles(gui) == ["Plums inside"], timeout=5_000)
    sidebar.scope.within.click()  # every chat
    qtbot.waitUntil(lambda: sorted(titles(gui)) == ["Plums inside", "Plums outside"])
    sidebar.scope.within.click()
    qtbot.waitUntil(lambda: titles(gui) == ["Plums inside"], timeout=5_000)


def test_the_keyboard_renames_deletes_opens_and_closes_a_project(gui: GuiApp, qtbot: Any) -> None:
    new_project(gui, qtbot, "Keys")
    rows = gui.window.sidebar.projects.list
    rows.setFocus()
    rows.setCurrentRow(0)
    qtbot.keyClick(rows, Qt.Key.Key_F2)
    asking = gui.window.findChild(QInputDialog, "rename-project")
    assert asking is not None and asking.textValue() == "Keys"
    asking.reject()
    qtbot.keyClick(rows, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: gui.window.findChild(QMessageBox, "confirm-delete-project") is not None)
    asking = gui.window.findChild(QMessageBox, "confirm-delete-project")
    assert "It holds no chat" in asking.text()
    asking.reject()
    qtbot.keyClick(rows, Qt.Key.Key_Return)  # closed (it was open since it was made)
    qtbot.waitUntil(lambda: gui.window.chat_list.project is None, timeout=5_000)
    qtbot.keyClick(rows, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: gui.window.chat_list.project is not None, timeout=5_000)


def test_an_imported_project_shows_in_the_sidebar(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=2)
    new_project(gui, qtbot, "Travelled")
    chat(gui, qtbot, "Packed")
    client = client_of(gui)
    export = tmp_path / "all.json"
    with export.open("wb") as file:
        run(qtbot, client.export_to(None, "json", file))
    project_id = run(qtbot, client.projects.all())[0]["id"]
    run(qtbot, client.projects.delete(project_id, "delete"))
    run(qtbot, gui.window.projects.refresh())
    assert project_names(gui) == []

    run(qtbot, gui.window.history_files._import(str(export)))
    qtbot.waitUntil(lambda: project_names(gui) == ["Travelled"], timeout=5_000)


def test_a_new_chat_starts_in_the_project_of_the_chat_on_screen(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=2)
    beans = new_project(gui, qtbot, "Beans")
    chat(gui, qtbot, "Broad beans")
    gui.window.new_chat()
    new_project(gui, qtbot, "Peas")  # open now: the group last chosen
    sidebar = gui.window.sidebar
    sidebar.search.setText("Broad")
    sidebar.scope.within.click()  # every chat
    qtbot.waitUntil(lambda: titles(gui) == ["Broad beans"], timeout=5_000)
    sidebar.list.setCurrentRow(0)  # a chat of Beans on screen
    qtbot.waitUntil(lambda: "Broad beans" in gui.transcript_text(), timeout=5_000)
    sidebar.search.clear()
    gui.window.new_chat()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("Sown where?")
    inside = run(qtbot, client_of(gui).projects.chats(beans))
    assert sorted(c["title"] for c in inside) == ["Broad beans", "Sown where?"]


def test_the_project_row_says_how_many_chats_it_holds(gui: GuiApp, qtbot: Any) -> None:
    project_id = new_project(gui, qtbot, "Counted")
    item = gui.window.sidebar.projects.list.item(0)
    assert item.toolTip() == "Counted — 0 chats"
    assert item.data(Qt.ItemDataRole.UserRole) == project_id
    assert QPoint() is not None
