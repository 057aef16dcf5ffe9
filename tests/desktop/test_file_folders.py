"""Where the file dialogs open (issue 49): never the process's working directory. Each kind
of file (attachments, chats to export or import, folders of documents) opens in the folder
last chosen for it, also after a relaunch, while that folder exists; else in the home folder
(to export to: Documents when there is one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from desktop.file_folders import ATTACHMENTS, CHATS, FileFolders
from desktop.window.state import WindowState
from tests.desktop.conftest import GuiApp


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own, and a working directory that is not it."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("XDG_CONFIG_HOME", "XDG_DOCUMENTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    elsewhere = tmp_path / "working"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return folder


class Dialogs:
    """QFileDialog's static calls, patched: each records the start it was given and answers
    `answer` (a list of paths, or "" for Cancel)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.starts: list[tuple[str, str]] = []
        self.answer: list[str] = []

        def one(name: str) -> Any:
            def call(_parent: Any, _caption: str, start: str = "", *_rest: Any) -> Any:
                self.starts.append((name, start))
                first = self.answer[0] if self.answer else ""
                if name == "getOpenFileNames":
                    return list(self.answer), ""
                if name == "getExistingDirectory":
                    return first
                return first, ""

            return call

        for name in ("getOpenFileName", "getOpenFileNames", "getSaveFileName",
                     "getExistingDirectory"):  # fmt: skip
            monkeypatch.setattr(QFileDialog, name, one(name))

    def last(self) -> tuple[str, str]:
        return self.starts[-1]


def open_library_browse(gui: GuiApp, qtbot: Any) -> Any:
    from desktop.tools.library_dialog import LibraryDialog

    gui.window.library_requested.emit()
    qtbot.waitUntil(lambda: gui.window.findChild(LibraryDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(LibraryDialog)
    assert dialog is not None
    dialog.browse_button.click()
    return dialog


def test_dialogs_open_at_home_and_exports_in_documents_never_the_working_directory(
    gui_factory: Any, home: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialogs = Dialogs(monkeypatch)
    gui: GuiApp = gui_factory()
    window = gui.window
    window.attachments.choose_files()
    assert dialogs.last() == ("getOpenFileNames", str(home))
    window.history_files.import_file()
    assert dialogs.last() == ("getOpenFileName", str(home))
    window.history_files.export_all()  # no Documents folder: home
    assert dialogs.last() == ("getSaveFileName", str(home / "parley-chats.json"))
    (home / "Documents").mkdir()
    window.history_files.export_all()
    assert dialogs.last() == ("getSaveFileName", str(home / "Documents" / "parley-chats.json"))
    dialog = open_library_browse(gui, qtbot)
    assert dialogs.last() == ("getExistingDirectory", str(home))
    dialog.reject()


def test_each_kind_opens_where_it_last_went_also_after_a_relaunch(
    gui_factory: Any, home: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dialogs = Dialogs(monkeypatch)
    pictures, chats, papers = (tmp_path / n for n in ("pictures", "chats", "papers"))
    for folder in (pictures, chats, papers / "2026"):
        folder.mkdir(parents=True)
    gui: GuiApp = gui_factory()
    window = gui.window
    dialogs.answer = [str(pictures / "a.png")]
    (pictures / "a.png").write_bytes(b"not really a picture")
    window.attachments.choose_files()
    dialogs.answer = [str(chats / "missing.json")]  # the import fails: the folder is kept
    window.history_files.import_file()
    dialogs.answer = [str(papers / "2026")]
    open_library_browse(gui, qtbot).reject()
    dialogs.answer = []
    window.attachments.choose_files()
    assert dialogs.last() == ("getOpenFileNames", str(pictures))
    window.history_files.export_all()
    assert dialogs.last() == ("getSaveFileName", str(chats / "parley-chats.json"))
    gui.close()

    relaunched: GuiApp = gui_factory()
    relaunched.window.attachments.choose_files()
    assert dialogs.last() == ("getOpenFileNames", str(pictures))
    relaunched.window.history_files.import_file()
    assert dialogs.last() == ("getOpenFileName", str(chats))
    open_library_browse(relaunched, qtbot).reject()
    assert dialogs.last() == ("getExistingDirectory", str(papers))


def test_a_folder_gone_since_falls_back_to_home(home: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    folders = FileFolders({ATTACHMENTS: str(gone), CHATS: str(home)})
    assert folders.start(ATTACHMENTS) == str(home)
    assert folders.start(CHATS) == str(home)
    folders.chosen(ATTACHMENTS, "relative/file.txt")  # not a place to come back to
    assert folders.start(ATTACHMENTS) == str(home)


def test_the_folders_are_saved_with_the_window_state_and_an_older_state_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "window.json"
    path.write_text('{"export_folder": "/old/exports", "zoom": 2}')
    state = WindowState.load(path)
    assert state.folders == {"chats": "/old/exports"} and state.zoom == 2
    state.folders[ATTACHMENTS] = "/pictures"
    state.save(path)
    assert WindowState.load(path).folders == {"chats": "/old/exports", "attachments": "/pictures"}
    path.write_text('{"folders": {"chats": 3}}')
    assert WindowState.load(path).folders == {}
