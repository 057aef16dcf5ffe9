"""File → Import of a big file (issue 38): a progress bar from the server's progress, and
Cancel stops the import (the request hung up), with nothing imported."""

from __future__ import annotations

import threading
from typing import Any

from tests.desktop.conftest import GuiApp
from tests.server.transfer.test_big_import import export


def test_an_import_shows_the_servers_progress_and_cancel_imports_nothing(
    gui: GuiApp, qtbot: Any, monkeypatch: Any, tmp_path: Any
) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QFileDialog, QProgressDialog, QPushButton

    from server.transfer import jobs

    released = threading.Event()  # the import's thread waits before its second batch
    write = jobs._Worker._write

    def held(worker: jobs._Worker, batch: list[Any], rows: int) -> None:
        if worker.batches >= 1:
            released.wait(30)
        write(worker, batch, rows)

    monkeypatch.setattr(jobs._Worker, "_write", held)
    big = tmp_path / "big.json"
    big.write_bytes(export(5_000))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(big), ""))
    files = gui.window.history_files
    try:
        files.import_file()

        def shown() -> QProgressDialog | None:
            for dialog in gui.window.findChildren(QProgressDialog):
                if dialog.value() > 0 and "so far" in dialog.labelText():
                    return dialog
            return None

        qtbot.waitUntil(lambda: shown() is not None, timeout=10_000)
        dialog = shown()
        assert dialog is not None
        (button,) = dialog.findChildren(QPushButton)
        with qtbot.waitSignal(files.done, timeout=10_000) as done:
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    finally:
        released.set()
    assert done.args == ["Import of big.json cancelled: nothing was imported"]
    assert gui.window.sidebar.list.count() == 0
