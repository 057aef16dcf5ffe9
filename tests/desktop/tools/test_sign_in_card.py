"""A reply that wanted a tool of a server that needs a sign-in: the step says so, and a card
above the message field asks the user to sign in — Sign in opens the server's page in the
browser (patched: httpx follows it back to Parley's /oauth/callback), the card follows the
sign-in to "Signed in" and the server's tools are there for the next message; Cancel gives a
waiting sign-in up. The real embedded server and OAuth-protected MCP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from desktop.tools.sign_in import begin_sign_in
from tests.desktop.conftest import GuiApp, run
from tests.desktop.transcript.test_view import items, text_of
from tests.support.oauth_parts import Browser, OAuthParts, oauth_parts
from tests.support.tools import write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[OAuthParts]:
    with oauth_parts(tmp_path) as found:
        yield found


def server_state(gui: GuiApp, qtbot: Any) -> str:
    client = gui.window.client
    assert client is not None
    (server,) = run(qtbot, client.tools())["servers"]
    return str(server["state"])


def reply_wanting_a_sign_in(
    gui_factory: Any, data_dir: Path, parts: OAuthParts, upstream: ScriptedUpstream, qtbot: Any
) -> GuiApp:
    """The app with the remote server `r`, after a reply whose model called the tool offered
    in place of r's (it needs a sign-in)."""
    write_config(data_dir / "mcp.json", {"r": {"url": parts.remote.url, "trust": "allow"}})
    gui: GuiApp = gui_factory()
    qtbot.waitUntil(lambda: server_state(gui, qtbot) == "needs_sign_in", timeout=30_000)
    upstream.queue = [
        Script(tokens=0, tool_calls=[{"name": "r__sign_in_needed", "arguments": "{}"}]),
        Script(texts=["You need to sign in to r first."]),
    ]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("use r")
    return gui


def test_a_reply_that_needs_a_sign_in_shows_the_card_and_signs_in_from_it(
    parts: OAuthParts,  # first: the window closes before its servers stop
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser()
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = reply_wanting_a_sign_in(gui_factory, data_dir, parts, upstream, qtbot)
    card = gui.window.sign_in_card
    qtbot.waitUntil(lambda: card.isVisible() and card.state == "ask", timeout=10_000)
    assert card.server == "r"
    assert "needs you to sign in" in card.title.text()
    assert "Sign in to r to use its tools" in gui.transcript_text()  # the step says why
    # Its chip says what it waits for, not "error".
    chips = lambda: [text_of(chip) for chip in items(gui.window.transcript, "stepStatus")]  # noqa: E731
    qtbot.waitUntil(lambda: chips() == ["needs sign-in"], timeout=5_000)
    assert not card.isAncestorOf(QApplication.focusWidget())  # nothing waits on it

    card.sign_in.click()
    qtbot.waitUntil(lambda: card.state == "signed_in", timeout=30_000)
    assert browser.opened[0].startswith(parts.auth.base_url)
    assert "Signed in to <b>r</b>" in card.title.text()
    assert server_state(gui, qtbot) == "ready"
    card.dismiss.click()
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=5_000)
    assert QApplication.focusWidget() is gui.window.composer.editor  # typing goes on there


def test_cancel_on_the_card_gives_the_sign_in_up(
    parts: OAuthParts,  # first: the window closes before its servers stop
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser(follows=False)
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = reply_wanting_a_sign_in(gui_factory, data_dir, parts, upstream, qtbot)
    card = gui.window.sign_in_card
    qtbot.waitUntil(lambda: card.isVisible() and card.state == "ask", timeout=10_000)
    card.sign_in.click()
    qtbot.waitUntil(lambda: card.state == "waiting" and card.cancel.isEnabled(), timeout=30_000)
    assert "Waiting for the browser" in card.title.text()
    card.cancel.click()
    qtbot.waitUntil(lambda: card.state == "ask" and card.sign_in.isEnabled(), timeout=10_000)
    page = browser.visit(browser.opened[0])
    assert page.status_code == 400  # its way back is refused
    qtbot.waitUntil(lambda: server_state(gui, qtbot) == "needs_sign_in", timeout=30_000)


def test_a_sign_in_done_elsewhere_shows_on_the_card(
    parts: OAuthParts,
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = Browser()
    monkeypatch.setattr(QDesktopServices, "openUrl", browser.open_url)
    gui = reply_wanting_a_sign_in(gui_factory, data_dir, parts, upstream, qtbot)
    card = gui.window.sign_in_card
    qtbot.waitUntil(lambda: card.isVisible() and card.state == "ask", timeout=10_000)
    client = gui.window.client
    assert client is not None
    run(qtbot, begin_sign_in(client, "r"))  # as the MCP servers dialog's Sign in does
    qtbot.waitUntil(lambda: card.state == "signed_in", timeout=30_000)
    assert card.dismiss.isEnabled() and card.dismiss.text() == "Close"
