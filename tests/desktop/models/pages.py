"""Opening the models page as a user does (the chat bar's Models button) and reading it."""

from __future__ import annotations

from typing import Any

from desktop.models.download_row import DownloadRow
from desktop.models.model_row import ModelRow
from desktop.models.page import ModelsPage
from tests.desktop.conftest import GuiApp


def open_page(gui: GuiApp, qtbot: Any) -> ModelsPage:
    gui.window.chat_bar.models_button.click()
    page = gui.window.findChild(ModelsPage, "models-page")
    assert page is not None
    qtbot.waitUntil(lambda: bool(page.list.models.rows), timeout=10_000)
    return page


def model_names(page: ModelsPage) -> list[str]:
    return list(page.list.models.rows)


def model_row(page: ModelsPage, name: str) -> ModelRow:
    return page.list.models.rows[name]


def download_rows(page: ModelsPage) -> list[DownloadRow]:
    return list(page.list.downloads.rows.values())


def only_download(page: ModelsPage) -> DownloadRow:
    (row,) = download_rows(page)
    return row


def is_error(page: ModelsPage) -> bool:
    """The page's message line is drawn as an error (red), not as a note."""
    return bool(page.message.styleSheet())
