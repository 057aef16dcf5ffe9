"""Downloads on the models page, each a row of the list: Pause, Resume and Cancel there
without a click on the row, the repository shown, a new row in sight, a long failure that
leaves the row's progress and buttons in view, no note left to go stale, and a file asked
for twice said plainly (not as an error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.models.page import ModelsPage
from server.models.bundled import bundled_gguf
from tests.desktop.conftest import GuiApp, run
from tests.desktop.models.pages import download_rows, is_error, only_download, open_page
from tests.support.hub import HubFile, LocalHub

FILE = "SmolLM2-135M-Instruct-Q4_1.gguf"
HOLD = 4 * 1024 * 1024


def start_from_hub(page: ModelsPage, qtbot: Any, query: str, repo_row: int = 0) -> None:
    """Search, open the repository at `repo_row`, download its first file (as a user does)."""
    page.tabs.setCurrentWidget(page.hub)
    page.hub.query.setText(query)
    page.hub.search_button.click()
    qtbot.waitUntil(lambda: page.hub.repos.rowCount() > repo_row, timeout=15_000)
    if page.hub.repos.rowCount() > 1:
        page.hub.repos.selectRow(repo_row)
    repo = page.hub.repos.item(repo_row, 0).text()
    qtbot.waitUntil(lambda: repo in page.hub.files_label.text(), timeout=15_000)
    qtbot.waitUntil(lambda: page.hub.files.rowCount() == 1, timeout=15_000)
    page.hub.files.selectRow(0)
    page.hub.download_button.click()


def test_pause_resume_and_cancel_need_no_click_on_the_row(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    served = HubFile(bundled_gguf(), hold_at=HOLD)
    hub.add("someone/Smol-GGUF", {FILE: served})
    page = open_page(gui, qtbot)
    start_from_hub(page, qtbot, "smol")
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    row = only_download(page)
    qtbot.waitUntil(served.held.is_set, timeout=30_000)
    qtbot.waitUntil(lambda: "Downloading" in row.text(), timeout=10_000)
    assert "from someone/Smol-GGUF" in row.facts.text()  # its repository
    for button in (row.pause_button, row.resume_button, row.cancel_button):
        assert button.isVisible()
    assert row.pause_button.isEnabled() and row.cancel_button.isEnabled()
    assert not row.resume_button.isEnabled()

    row.pause_button.click()
    qtbot.waitUntil(lambda: "Paused" in row.facts.text(), timeout=15_000)
    qtbot.waitUntil(row.resume_button.isEnabled, timeout=5_000)
    assert not row.pause_button.isEnabled()
    served.hold_at = None
    row.resume_button.click()
    qtbot.waitUntil(lambda: not download_rows(page), timeout=60_000)  # its model now
    qtbot.waitUntil(lambda: "SmolLM2-135M-Instruct-Q4_1" in page.list.models.rows, timeout=10_000)
    # What was asked along the way is not said after it all ended.
    assert "Resumed" not in page.message.text() and "Paused" not in page.message.text()
    assert "Downloading" not in page.message.text()


def test_cancel_forgets_the_download(hub: LocalHub, gui: GuiApp, qtbot: Any) -> None:
    served = HubFile(bundled_gguf(), hold_at=HOLD)
    hub.add("someone/Smol-GGUF", {FILE: served})
    page = open_page(gui, qtbot)
    start_from_hub(page, qtbot, "smol")
    qtbot.waitUntil(served.held.is_set, timeout=30_000)
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    only_download(page).cancel_button.click()
    qtbot.waitUntil(lambda: not download_rows(page), timeout=15_000)
    client = gui.window.client
    assert client is not None
    assert run(qtbot, client.hub.downloads()) == []


def test_two_downloads_of_one_file_name_say_their_repositories(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    first, second = HubFile(bundled_gguf(), hold_at=HOLD), HubFile(bundled_gguf())
    hub.add("alice/Smol-GGUF", {FILE: first}, downloads=2)
    hub.add("bob/Smol-GGUF", {FILE: second}, downloads=1)
    page = open_page(gui, qtbot)
    start_from_hub(page, qtbot, "smol", 0)
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    start_from_hub(page, qtbot, "smol", 1)
    qtbot.waitUntil(lambda: len(download_rows(page)) == 2, timeout=15_000)
    origins = sorted(row.facts.text().split(" · ")[0] for row in download_rows(page))
    assert origins == ["from alice/Smol-GGUF", "from bob/Smol-GGUF"]


def test_a_new_download_row_is_in_sight(
    hub: LocalHub, gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    served = HubFile(bundled_gguf(), hold_at=HOLD)
    hub.add("someone/Smol-GGUF", {FILE: served})
    page = open_page(gui, qtbot)
    page.resize(720, 360)  # fewer rows than the list has fit
    qtbot.waitUntil(lambda: len(page.list.models.rows) >= 2, timeout=10_000)
    page.list.verticalScrollBar().setValue(page.list.verticalScrollBar().maximum())
    start_from_hub(page, qtbot, "smol")
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    row = only_download(page)
    assert page.tabs.currentIndex() == 0  # the list, where the row is
    qtbot.waitUntil(lambda: row.isVisible() and not row.visibleRegion().isEmpty(), timeout=5_000)
    top = row.mapTo(page.list.viewport(), row.rect().topLeft()).y()
    assert 0 <= top < page.list.viewport().height()


def test_a_long_failure_leaves_the_progress_and_buttons_in_view(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    long_name = "a-model-with-a-very-long-name-" * 4 + "Q4_1.gguf"
    hub.add("someone/Long-GGUF", {long_name: HubFile(bundled_gguf(), missing=True)})
    page = open_page(gui, qtbot)
    page.resize(760, 520)
    start_from_hub(page, qtbot, "long")
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    row = only_download(page)
    qtbot.waitUntil(lambda: "Failed" in row.state.text(), timeout=30_000)
    qtbot.waitUntil(lambda: row.width() <= page.list.viewport().width(), timeout=5_000)
    for part in (row.bar, row.resume_button, row.cancel_button):
        right = part.mapTo(row, part.rect().topRight()).x()
        assert part.isVisible() and right <= row.width(), part
    assert row.state.wordWrap()


def test_a_file_asked_for_twice_is_a_note_not_an_error(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    served = HubFile(bundled_gguf(), hold_at=HOLD)
    hub.add("someone/Smol-GGUF", {FILE: served})
    page = open_page(gui, qtbot)
    start_from_hub(page, qtbot, "smol")
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    page.tabs.setCurrentWidget(page.hub)
    page.hub.files.selectRow(0)
    page.hub.download_button.click()
    qtbot.waitUntil(lambda: "already" in page.message.text(), timeout=15_000)
    assert not is_error(page)
    assert "id" not in page.message.text().split()


def test_a_downloaded_model_removed_can_be_added_again(
    hub: LocalHub, gui: GuiApp, qtbot: Any
) -> None:
    hub.add("someone/Smol-GGUF", {FILE: HubFile(bundled_gguf())})
    page = open_page(gui, qtbot)
    start_from_hub(page, qtbot, "smol")
    name = "SmolLM2-135M-Instruct-Q4_1"
    qtbot.waitUntil(lambda: name in page.list.models.rows, timeout=60_000)
    qtbot.waitUntil(lambda: not download_rows(page), timeout=10_000)
    page.list.models.rows[name].remove_button.click()
    # Its file is still on disk, and its download remembered: the row comes back to say so.
    qtbot.waitUntil(lambda: len(download_rows(page)) == 1, timeout=15_000)
    row = only_download(page)
    assert "Downloaded, not a model now" in row.text() and "from someone/Smol-GGUF" in row.text()
    assert row.add_button.isVisibleTo(page) and row.cancel_button.text() == "Clear"
    row.add_button.click()
    qtbot.waitUntil(lambda: name in page.list.models.rows, timeout=15_000)
    qtbot.waitUntil(lambda: not download_rows(page), timeout=10_000)
