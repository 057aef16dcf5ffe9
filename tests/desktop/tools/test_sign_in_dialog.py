"""MCP servers → a remote server that needs a sign-in: its row says so, Sign in opens the
authorization page in the browser (QDesktopServices.openUrl, patched to be a browser that
follows the page's redirect back to Parley's /oauth/callback with httpx), the row follows the
sign-in to "Signed in"; Cancel gives a waiting sign-in up; Sign out. The real embedded server,
an SDK-written OAuth-protected MCP server and its authorization server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from desktop.tools.sign_in import open_in_browser
from desktop.tools.sign_in_cell import SignInCell
from desktop.tools.tools_dialog import SIGN_IN_COLUMN, ToolsDialog
from tests.desktop.conftest import GuiApp
from tests.desktop.test_tools_dialog import open_tools
from tests.support.oauth_parts import Browser, OAuthParts, oauth_parts
from tests.support.tools import write_config

pytestmark = pytest.mark.slow


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[OAuthParts]:
    with oauth_parts(tmp_path) as found:
        yield found


def remote_gui(gui_factory: Any, data_dir: Path, parts: OAuthParts) -> GuiApp:
    write_config(data_dir / "mcp.json", {"r": {"url": parts.remote.url, "trust": "allow"}})
    app: GuiApp = gui_factory()
    return app


def cell(dialog: ToolsDialog) -> SignInCell | None:
    found = dialog.table.cellWidget(0, SIGN_IN_COLUMN) if dialog.table.rowCount() else None
    return found if isinstance(found, SignInCell) else None


def says(dialog: ToolsDialog, words: str, button: str) -> bool:
    """The server's row says `words` in its sign-in column, with `button` ready to press."""
    found = cell(dialog)
    if found is None or found.button.isHidden() or not found.button.isEnabled():
        return False
    item = dialog.table.item(0, SIGN_IN_COLUMN)
    return item.text() == words and found.button.text() == button


def test_a_server_that_needs_a_sign_in_signs_in_from_its_row_and_out_again(
    parts: OAuthParts,  # first: the window closes before its servers stop
    gui_factory: Any,
    data_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser()
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = remote_gui(gui_factory, data_dir, parts)
    dialog = open_tools(gui, qtbot)
    qtbot.waitUntil(
        lambda: (
            says(dialog, "Sign in to use its tools", "Sign in")
            and dialog.table.item(0, 1).text() == "needs sign-in"
        ),  # its state, once discovered
        timeout=30_000,
    )
    dialog.table.selectRow(0)

    cell(dialog).button.click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: says(dialog, "Signed in", "Sign out"), timeout=30_000)
    assert browser.opened[0].startswith(parts.auth.base_url)
    qtbot.waitUntil(lambda: bool(browser.pages), timeout=10_000)
    assert "Signed in to r" in browser.pages[0].text  # Parley's own page, in the browser
    assert dialog.table.item(0, 1).text() == "ready with 1 tool"
    assert dialog.message.text() == "Signed in to r; it is ready with 1 tool."
    assert parts.auth.provider.issued[0] in parts.ring.text()

    cell(dialog).button.click()  # type: ignore[union-attr]  (Sign out)
    qtbot.waitUntil(lambda: says(dialog, "Sign in to use its tools", "Sign in"), timeout=30_000)
    qtbot.waitUntil(lambda: dialog.message.text().startswith("Signed out of r"), timeout=5_000)
    assert parts.auth.provider.issued[0] not in parts.ring.text()
    dialog.reject()


def test_cancel_gives_up_a_sign_in_waiting_for_the_browser(
    parts: OAuthParts,  # first: the window closes before its servers stop
    gui_factory: Any,
    data_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser(follows=False)
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = remote_gui(gui_factory, data_dir, parts)
    dialog = open_tools(gui, qtbot)
    qtbot.waitUntil(lambda: says(dialog, "Sign in to use its tools", "Sign in"), timeout=30_000)
    # From the keyboard: Tab through the row's cells to its button, Space to press it.
    dialog.activateWindow()
    dialog.table.setFocus()
    dialog.table.setCurrentCell(0, 0)
    qtbot.waitUntil(dialog.table.hasFocus, timeout=5_000)
    button = cell(dialog).button  # type: ignore[union-attr]
    for _ in range(SIGN_IN_COLUMN):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is button
    qtbot.keyClick(button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: says(dialog, "Waiting for the browser…", "Cancel"), timeout=30_000)
    qtbot.waitUntil(
        lambda: dialog.message.text().startswith("Sign in to r in your browser"), timeout=5_000
    )

    cell(dialog).button.click()  # type: ignore[union-attr]  (Cancel)
    qtbot.waitUntil(lambda: says(dialog, "Sign in to use its tools", "Sign in"), timeout=30_000)
    qtbot.waitUntil(lambda: dialog.message.text() == "Stopped signing in to r.", timeout=5_000)
    page = browser.visit(browser.opened[0])  # the user finishes in the browser after all
    assert page.status_code == 400 and "not valid" in page.text
    assert parts.auth.provider.grants == []
    dialog.reject()


def test_only_a_web_page_is_opened_in_the_browser(
    qapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's address comes from the remote server's authorization server."""
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    assert not open_in_browser("file:///etc/passwd")
    assert not open_in_browser("x-some-app://run?this")
    assert opened == []
    assert open_in_browser("https://auth.example/authorize?x=1")


def test_closing_the_window_during_a_sign_in_ends_it(
    parts: OAuthParts,
    gui_factory: Any,
    data_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser(follows=False)
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = remote_gui(gui_factory, data_dir, parts)
    dialog = open_tools(gui, qtbot)
    qtbot.waitUntil(lambda: says(dialog, "Sign in to use its tools", "Sign in"), timeout=30_000)
    cell(dialog).button.click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: says(dialog, "Waiting for the browser…", "Cancel"), timeout=30_000)
    gui.close()  # the quit path is not held by the browser
    with pytest.raises(httpx.ConnectError):  # the way back leads nowhere now
        browser.visit(browser.opened[0])
    assert parts.auth.provider.grants == []


def test_a_sign_in_the_user_refuses_says_why_in_plain_words(
    parts: OAuthParts,
    gui_factory: Any,
    data_dir: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser(follows=False)
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = remote_gui(gui_factory, data_dir, parts)
    dialog = open_tools(gui, qtbot)
    qtbot.waitUntil(lambda: says(dialog, "Sign in to use its tools", "Sign in"), timeout=30_000)
    cell(dialog).button.click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: says(dialog, "Waiting for the browser…", "Cancel"), timeout=30_000)
    # The user says no at the authorization server: it sends the browser back with an error.
    query = parse_qs(urlparse(browser.opened[0]).query)
    back = (
        query["redirect_uri"][0]
        + "?"
        + urlencode(
            {
                "state": query["state"][0],
                "error": "access_denied",
                "error_description": "No, thanks",
            }
        )
    )
    browser.visit(back)
    qtbot.waitUntil(lambda: says(dialog, "Sign-in failed", "Sign in"), timeout=30_000)
    words = "the authorization server said: No, thanks"
    qtbot.waitUntil(lambda: dialog.message.text() == f"r: Sign-in failed: {words}", timeout=5_000)
    dialog.table.selectRow(0)
    assert f"Its last sign-in failed: {words}" in dialog.details.toPlainText()
