"""The Library dialog's progress (issue 43): no bar without a folder, and a folder just
added is "being indexed" until the indexer has been through it, never "Up to date." too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.tools.library_dialog import LibraryDialog
from server.types.library import FolderJSON, LibraryJSON, LibraryProgressJSON
from tests.desktop.conftest import GuiApp

IDLE: LibraryProgressJSON = {
    "state": "idle", "folder": None, "done": 0, "total": 0, "current": None
}  # fmt: skip


def folder(path: str, files: int = 0, chunks: int = 0) -> FolderJSON:
    return {"id": "f1", "path": path, "added_at": 0.0, "files": files, "chunks": chunks,
            "skipped": 0, "skipped_files": []}  # fmt: skip


def library(folders: list[FolderJSON], progress: LibraryProgressJSON = IDLE) -> LibraryJSON:
    return {"folders": folders, "progress": progress}


def test_no_folder_shows_no_progress_bar(qtbot: Any) -> None:
    dialog = LibraryDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_library(library([]))
    assert not dialog.progress.isVisible()  # not a full bar over nothing
    assert dialog.progress_label.text() == "No folder yet."
    dialog.show_library(library([folder("/docs", 3, 9)]))
    assert dialog.progress.isVisible() and dialog.progress_label.text() == "Up to date."


def test_a_folder_just_added_is_not_up_to_date_until_indexed(qtbot: Any) -> None:
    dialog = LibraryDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_added(folder("/docs"))
    dialog.show_library(library([folder("/docs")]))  # queued: the indexer has not begun
    assert dialog.message.text() == "Added /docs; it is being indexed."
    assert dialog.progress_label.text() != "Up to date."
    assert dialog.progress.maximum() == 0  # busy
    indexing: LibraryProgressJSON = {
        "state": "indexing", "folder": "/docs", "done": 1, "total": 3, "current": "/docs/a.md"
    }  # fmt: skip
    dialog.show_library(library([folder("/docs")], indexing))
    assert dialog.progress_label.text().startswith("Indexing /docs: 1 of 3 files")
    dialog.show_library(library([folder("/docs", 3, 12)]))
    assert dialog.progress_label.text() == "Up to date."
    assert dialog.message.text() == "Indexed /docs: 3 files, 12 passages."


def test_an_empty_folder_added_is_up_to_date_after_a_moment(qtbot: Any) -> None:
    dialog = LibraryDialog()
    qtbot.addWidget(dialog)
    dialog.show_added(folder("/empty"))
    dialog.show_library(library([folder("/empty")]))
    assert dialog.progress_label.text() != "Up to date."
    dialog.show_library(library([folder("/empty")]))
    assert dialog.progress_label.text() == "Up to date."
    assert dialog.message.text() == "Indexed /empty: 0 files, 0 passages."


def test_adding_a_folder_never_says_up_to_date_and_being_indexed_at_once(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    from tests.support.documents import topic_folder

    topic_folder(tmp_path / "docs")
    gui.window.chat_bar.library_button.click()
    qtbot.waitUntil(lambda: gui.window.findChild(LibraryDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(LibraryDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.progress_label.text() == "No folder yet.", timeout=5_000)
    assert not dialog.progress.isVisible()
    seen: list[tuple[str, str]] = []
    show = dialog.show_library

    def spy(found: LibraryJSON) -> None:
        show(found)
        seen.append((dialog.progress_label.text(), dialog.message.text()))

    dialog.show_library = spy  # type: ignore[method-assign]
    dialog.path_edit.setText(str(tmp_path / "docs"))
    dialog.add_button.click()
    qtbot.waitUntil(lambda: bool(seen) and seen[-1][0] == "Up to date.", timeout=30_000)
    assert not [s for s in seen if s[0] == "Up to date." and "being indexed" in s[1]], seen
    assert seen[-1][1].startswith(f"Indexed {tmp_path / 'docs'}: 20 files")
    dialog.reject()
