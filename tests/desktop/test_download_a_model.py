"""A new user gets a real model without leaving Parley: on the models page's
"Download" tab, search the (local) Hugging Face hub, pick a GGUF, download it — killed
mid-way and resumed from the bytes on disk — see it verified and added, and chat with it.
Against a local server that speaks the hub's HTTP API (tests/support/hub.py, via
HF_ENDPOINT), with the real app and its embedded server; nothing reaches the internet."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import (
    download_rows,
    model_names,
    model_row,
    only_download,
    open_page,
)
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
    page = open_page(gui, qtbot)
    hub_panel = page.hub
    page.tabs.setCurrentWidget(hub_panel)

    hub_panel.query.setText("smollm2")
    hub_panel.search_button.click()
    qtbot.waitUntil(lambda: hub_panel.repos.rowCount() == 1, timeout=15_000)
    assert row_text(hub_panel.repos, 0, 0) == REPO
    # The one result opens by itself: its files are listed.
    qtbot.waitUntil(lambda: hub_panel.files.rowCount() == 1, timeout=15_000)  # GGUFs only
    assert row_text(hub_panel.files, 0, 0) == FILE
    assert row_text(hub_panel.files, 0, 2) == "Q4_1"
    assert row_text(hub_panel.files, 0, 3) == "fits"  # 98 MB on this machine
    hub_panel.files.selectRow(0)
    assert hub_panel.download_button.isEnabled()
    hub_panel.download_button.click()

    # Mid-way (8 MiB in), the download's process is killed.
    qtbot.waitUntil(served.held.is_set, timeout=30_000)
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=10_000)
    row = only_download(page)
    assert page.tabs.currentIndex() == 0 and row.isVisible()  # its row is in sight
    os.kill(download_child(gui), signal.SIGKILL)
    qtbot.waitUntil(lambda: "Failed" in row.text(), timeout=15_000)
    assert row.resume_button.isEnabled()  # no click on the row needed
    served.hold_at = None
    served.release_event.set()
    row.resume_button.click()
    name = "SmolLM2-135M-Instruct-Q4_1"
    qtbot.waitUntil(lambda: name in model_names(page), timeout=60_000)
    qtbot.waitUntil(lambda: not download_rows(page), timeout=10_000)  # it is its model now
    # Resumed where it stopped: the second transfer began at the bytes kept on disk (what
    # the killed process had written of the 8 MiB sent), and sent only the rest.
    first, second = served.gets[0], served.gets[-1]
    size = bundled_gguf().stat().st_size
    assert first[0] == 0 and 0 < second[0] <= HOLD and second[1] == size - second[0]
    assert f"from {REPO}" in model_row(page, name).facts.text()
    page.reject()

    # The new model is in the picker: chat with it.
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
