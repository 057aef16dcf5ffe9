"""File → Export and Import end with a notice the user dismisses (issue 49): an export names
its file and can show its folder; an import that finds chats of its file already here asks
(copies, skip, cancel), and ends with a summary of what it did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QAbstractButton, QFileDialog, QMessageBox

from desktop.chats.history_notices import COPY, SHOW_FOLDER, SKIP
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream


def shown(gui: GuiApp, name: str) -> QMessageBox | None:
    for box in gui.window.findChildren(QMessageBox, name):
        if box.isVisible():
            return box
    return None


def button(box: QMessageBox, text: str) -> QAbstractButton:
    (found,) = [b for b in box.buttons() if b.text() == text]
    return found


def wait_shown(gui: GuiApp, qtbot: Any, name: str) -> QMessageBox:
    qtbot.waitUntil(lambda: shown(gui, name) is not None, timeout=10_000)
    box = shown(gui, name)
    assert box is not None
    return box


def test_an_export_says_where_it_went_and_shows_its_folder(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:  # fmt: skip
    upstream.script = Script(texts=["Basalt is volcanic."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is basalt?")
    target = tmp_path / "exports" / "all chats.json"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(target), ""))
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    gui.window.history_files.export_all()
    notice = wait_shown(gui, qtbot, "export-done")
    assert "all chats.json" in notice.text() and str(target.parent) in notice.text()
    button(notice, SHOW_FOLDER).click()
    assert [url.toLocalFile() for url in opened] == [str(target.parent)]
    assert notice.isVisible()  # until the user dismisses it
    notice.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: shown(gui, "export-done") is None, timeout=5_000)


def test_an_import_of_chats_already_here_asks_then_says_what_it_did(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:  # fmt: skip
    files = gui.window.history_files
    upstream.script = Script(texts=["Basalt is volcanic."])
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.send("What is basalt?")
    everything = tmp_path / "all.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(everything), ""))
    with qtbot.waitSignal(files.done, timeout=5_000):
        files.export_all()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(everything), ""))
    sidebar = gui.window.sidebar.list
    qtbot.waitUntil(lambda: sidebar.count() == 1, timeout=5_000)

    files.import_file()
    question = wait_shown(gui, qtbot, "import-duplicates")
    assert question.text() == "1 of 1 chat is already here."
    with qtbot.waitSignal(files.done, timeout=10_000) as done:
        button(question, SKIP).click()
    assert done.args == ["Imported 0 chats from all.json (1 skipped as already here)."]
    summary = wait_shown(gui, qtbot, "import-summary")
    assert summary.text() == done.args[0]
    assert sidebar.count() == 1

    files.import_file()  # (the summary before gives way to the question)
    question = wait_shown(gui, qtbot, "import-duplicates")
    with qtbot.waitSignal(gui.window.chat_list.shown, timeout=10_000):
        button(question, COPY).click()
    summary = wait_shown(gui, qtbot, "import-summary")
    assert summary.text() == (
        "Imported 1 chat from all.json (1 already here, imported again as copies)."
    )
    qtbot.waitUntil(lambda: sidebar.count() == 2, timeout=5_000)
    assert summary.isVisible()  # the list refreshed; the summary stays until dismissed

    files.import_file()
    question = wait_shown(gui, qtbot, "import-duplicates")
    assert question.text() == "1 of 1 chat is already here."  # the copy is the same chat
    with qtbot.waitSignal(files.done, timeout=10_000) as done:
        question.button(QMessageBox.StandardButton.Cancel).click()
    assert done.args == ["Import of all.json cancelled: nothing was imported"]
    assert sidebar.count() == 2
