"""The page's Download tab: search results that always open (a second search, a search with
one result), and a download that will not fit asked about first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from desktop.models.page import ModelsPage
from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import download_rows, only_download, open_page
from tests.support.hub import HubFile, LocalHub

FILE = "SmolLM2-135M-Instruct-Q4_1.gguf"


def hub_page(gui: GuiApp, qtbot: Any) -> ModelsPage:
    page = open_page(gui, qtbot)
    page.tabs.setCurrentWidget(page.hub)
    return page


def search(page: ModelsPage, qtbot: Any, query: str, count: int) -> None:
    page.hub.query.setText(query)
    page.hub.search_button.click()
    qtbot.waitUntil(lambda: "found." in page.message.text(), timeout=15_000)
    assert page.hub.repos.rowCount() == count


def test_a_second_search_opens_the_repository_picked_again(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    served = HubFile(bundled_gguf())
    hub.add("someone/Smol-GGUF", {FILE: served}, downloads=20)
    hub.add("other/Smol-GGUF", {"other-Q8_0.gguf": served}, downloads=10)
    page = hub_page(gui, qtbot)
    files = page.hub.files
    search(page, qtbot, "smol", 2)
    page.hub.repos.selectRow(0)
    qtbot.waitUntil(lambda: files.rowCount() == 1, timeout=15_000)

    search(page, qtbot, "smol", 2)  # the same rows again: the files go until one is picked
    assert files.rowCount() == 0
    page.hub.repos.selectRow(0)
    qtbot.waitUntil(lambda: files.rowCount() == 1, timeout=15_000)
    assert files.item(0, 0).text() == FILE


def test_a_search_with_one_result_opens_it(hub: LocalHub, gui: GuiApp, qtbot: Any) -> None:
    hub.add("someone/Smol-GGUF", {FILE: HubFile(bundled_gguf())})
    page = hub_page(gui, qtbot)
    for _ in range(2):  # the second time too, with the same row chosen
        page.hub.files.setRowCount(0)
        page.hub.query.setText("smol")
        page.hub.search_button.click()
        qtbot.waitUntil(lambda: page.hub.files.rowCount() == 1, timeout=15_000)
    assert "Files of someone/Smol-GGUF" in page.hub.files_label.text()


def test_a_download_that_will_not_fit_asks_first_and_its_failure_clears(
    hub: LocalHub, gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.gguf"
    with huge.open("wb") as file:  # sparse: 4 TB that take no room
        file.truncate(4 * 10**12)
    hub.add("someone/Huge-GGUF", {"huge-Q8_0.gguf": HubFile(huge, sha256="a" * 64)})
    page = hub_page(gui, qtbot)
    page.hub.query.setText("huge")
    page.hub.search_button.click()
    qtbot.waitUntil(lambda: page.hub.files.rowCount() == 1, timeout=15_000)
    assert page.hub.files.item(0, 3).text() == "won't fit"
    page.hub.files.selectRow(0)

    page.hub.download_button.click()
    ask = page.findChild(QMessageBox, "download-wont-fit")
    assert ask is not None and "will not fit" in ask.text()
    ask.button(QMessageBox.StandardButton.Cancel).click()
    client = gui.window.client
    assert client is not None
    assert run(qtbot, client.hub.downloads()) == []  # nothing started

    page.hub.download_button.click()
    qtbot.waitUntil(lambda: page.findChild(QMessageBox, "download-wont-fit") is not None)
    ask = page.findChild(QMessageBox, "download-wont-fit")
    assert ask is not None
    (anyway,) = [b for b in ask.buttons() if b.text() == "Download anyway"]
    anyway.click()
    # Started: its row on the Models tab, in sight; it fails for want of disk, and says so.
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    row = only_download(page)
    assert page.tabs.currentIndex() == 0
    qtbot.waitUntil(lambda: "Failed: not enough disk space" in row.text(), timeout=15_000)
    assert row.cancel_button.text() == "Clear" and row.cancel_button.isEnabled()
    row.cancel_button.click()
    qtbot.waitUntil(lambda: not download_rows(page), timeout=10_000)
    assert run(qtbot, client.hub.downloads()) == []  # forgotten by the server too
