"""A new user gets a real model without leaving Parley (issue 39): in Models → "Download a
model…", search the (local) Hugging Face hub, pick a GGUF, download it — killed mid-way and
resumed from the bytes on disk — see it verified and added, and chat with it. Against a
local server that speaks the hub's HTTP API (tests/support/hub.py, via HF_ENDPOINT), with
the real app and its embedded server; nothing reaches the internet."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from desktop.models.hub_dialog import HubDialog
from desktop.models.models_dialog import ModelsDialog
from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.support.hub import HubFile, LocalHub

pytestmark = pytest.mark.timeout(300)  # a second engine loads the downloaded model

REPO, FILE = "parley-tests/SmolLM2-GGUF", "SmolLM2-135M-Instruct-Q4_1.gguf"
HOLD = 8 * 1024 * 1024


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    local = LocalHub().start()
    monkeypatch.setenv("HF_ENDPOINT", local.url)
    monkeypatch.setenv("HF_TOKEN", "")
    yield local
    local.stop()


def download_child(gui: GuiApp) -> int:
    """The pid of the process downloading now (the embedded server's own)."""
    assert gui.app.server is not None
    downloads = gui.app.server._server.server.config.app.state.downloads  # type: ignore[union-attr]
    child = downloads._child
    assert child is not None and child.process is not None
    return int(child.process.pid)


def row_text(table: Any, row: int, column: int) -> str:
    item = table.item(row, column)
    return str(item.text()) if item is not None else ""


def test_search_download_killed_and_resumed_then_chat(
    hub: LocalHub, gui_factory: Any, qtbot: Any
) -> None:
    served = HubFile(bundled_gguf(), hold_at=HOLD)
    hub.add(REPO, {FILE: served, "README.md": served}, downloads=1234)
    gui: GuiApp = gui_factory()
    window = gui.window
    window.chat_bar.models_button.click()
    models = window.findChild(ModelsDialog, "models-dialog")
    assert models is not None
    models.hub_button.click()
    dialog = window.findChild(HubDialog, "hub-dialog")
    assert dialog is not None

    dialog.query.setText("smollm2")
    dialog.search_button.click()
    qtbot.waitUntil(lambda: dialog.repos.rowCount() == 1, timeout=15_000)
    assert row_text(dialog.repos, 0, 0) == REPO
    dialog.repos.selectRow(0)
    qtbot.waitUntil(lambda: dialog.files.rowCount() == 1, timeout=15_000)  # GGUFs only
    assert row_text(dialog.files, 0, 0) == FILE
    assert row_text(dialog.files, 0, 2) == "Q4_1"
    assert row_text(dialog.files, 0, 3) == "fits"  # 98 MB on this machine
    dialog.files.selectRow(0)
    assert dialog.download_button.isEnabled()
    dialog.download_button.click()

    # Mid-way (8 MiB in), the download's process is killed.
    qtbot.waitUntil(served.held.is_set, timeout=30_000)
    qtbot.waitUntil(lambda: dialog.downloads.rowCount() == 1, timeout=10_000)
    os.kill(download_child(gui), signal.SIGKILL)
    qtbot.waitUntil(lambda: "failed" in row_text(dialog.downloads, 0, 1), timeout=15_000)
    dialog.downloads.selectRow(0)
    qtbot.waitUntil(dialog.resume_button.isEnabled, timeout=5_000)
    served.hold_at = None
    served.release_event.set()
    dialog.resume_button.click()
    qtbot.waitUntil(lambda: "ready" in row_text(dialog.downloads, 0, 1), timeout=60_000)
    # Resumed where it stopped: the second transfer began at the bytes kept on disk (what
    # the killed process had written of the 8 MiB sent), and sent only the rest.
    first, second = served.gets[0], served.gets[-1]
    size = bundled_gguf().stat().st_size
    assert first[0] == 0 and 0 < second[0] <= HOLD and second[1] == size - second[0]
    assert "SmolLM2-135M-Instruct-Q4_1" in row_text(dialog.downloads, 0, 1)
    dialog.reject()

    # The new model is in the picker: chat with it.
    name = "SmolLM2-135M-Instruct-Q4_1"
    picker = window.model_picker
    qtbot.waitUntil(lambda: picker.combo.findText(name) >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findText(name))
    picker.combo.activated.emit(picker.combo.currentIndex())
    with qtbot.waitSignal(window.reply_finished, timeout=240_000):
        gui.send("Say hi in three words.")
    assert window.client is not None
    current = window.current_id
    assert current is not None
    conversation = run(qtbot, window.client.conversation(current))
    reply = conversation["messages"][-1]
    assert reply["model"] == name and reply["status"] == "completed", reply
    assert reply["content"].strip()
    models.reject()
