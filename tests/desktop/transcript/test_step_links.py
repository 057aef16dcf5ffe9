"""A tool step whose result linked to resources (MCP `resource_link`) lists them on its card;
activating one has the server read it through that step and Parley show it — its text in a
read-only viewer (which attaches it to the next message on request), an image in the image
viewer, a failure in the server's words — and nothing is ever handed to the system to open.

The real window and embedded server, the scripted upstream calling the `link` tool of
tests/support/mcp_resources.py (an MCP server written with the official SDK, over stdio)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtQuick import QQuickItem

from desktop.transcript.image_viewer import ImageViewer
from desktop.transcript.resource_viewer import ResourceViewer
from tests.desktop.conftest import GuiApp, run
from tests.desktop.transcript.test_view import items
from tests.support.resources import resources_server
from tests.support.tools import write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def resources_gui(
    gui_factory: Any, data_dir: Path, tmp_path: Path, qtbot: Any, monkeypatch: Any
) -> GuiApp:
    """The window with the resources server `r` running; QDesktopServices refuses (and
    records) anything it is asked to open."""
    write_config(data_dir / "mcp.json", {"r": resources_server(tmp_path / "resources.log")})
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or False)
    gui: GuiApp = gui_factory()
    gui.opened = opened  # type: ignore[attr-defined]
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


def linked_reply(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any, uri: str) -> None:
    called = {"name": "r__link", "arguments": json.dumps({"uri": uri})}
    upstream.queue = [Script(tokens=0, tool_calls=[called]), Script(texts=["See the link."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("link it")


def link_items(gui: GuiApp) -> list[QQuickItem]:
    return items(gui.window.transcript, "stepLink")


def activate(gui: GuiApp, qtbot: Any, link: QQuickItem) -> None:
    """From the keyboard: the link focused, Enter."""
    link.forceActiveFocus()
    qtbot.keyClick(gui.window.transcript, Qt.Key.Key_Return)


def viewer_of(gui: GuiApp, qtbot: Any, kind: type[Any]) -> Any:
    qtbot.waitUntil(lambda: any(v.isVisible() for v in gui.window.findChildren(kind)),
                    timeout=10_000)  # fmt: skip
    return next(v for v in gui.window.findChildren(kind) if v.isVisible())


def test_a_steps_link_is_listed_and_opens_its_text_in_a_viewer(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    linked_reply(gui, upstream, qtbot, "docs://readme")
    qtbot.waitUntil(lambda: len(link_items(gui)) == 1, timeout=5_000)
    (link,) = link_items(gui)
    label = "linked · docs://readme · text/markdown"
    assert label in gui.transcript_text()  # Find and the chat's text read it too
    activate(gui, qtbot, link)
    viewer = viewer_of(gui, qtbot, ResourceViewer)
    qtbot.waitUntil(lambda: "Hello from the readme." in viewer.text.toPlainText(), timeout=10_000)
    assert viewer.text.isReadOnly()
    assert viewer.windowTitle() == "Linked resource — linked"
    assert viewer.about.text().startswith("docs://readme · text/plain")  # as read
    assert gui.opened == []  # type: ignore[attr-defined]

    # Attach to message: a chip in the composer, as if chosen in its picker.
    qtbot.mouseClick(viewer.attach_button, Qt.MouseButton.LeftButton)
    assert not viewer.isVisible()
    chips = gui.window.composer.chips_shown
    qtbot.waitUntil(lambda: len(chips()) == 1 and chips()[0].state == "ready", timeout=10_000)
    attached = chips()[0].attachment
    assert attached is not None and (attached["name"], attached["kind"]) == ("linked", "text")


def test_an_image_link_opens_in_the_image_viewer(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    linked_reply(gui, upstream, qtbot, "img://dot.png")
    qtbot.waitUntil(lambda: len(link_items(gui)) == 1, timeout=5_000)
    activate(gui, qtbot, link_items(gui)[0])
    viewer = viewer_of(gui, qtbot, ImageViewer)
    pixmap = viewer.picture.pixmap()
    assert pixmap is not None and not pixmap.isNull()
    assert not any(v.isVisible() for v in gui.window.findChildren(ResourceViewer))
    viewer.close()
    assert gui.opened == []  # type: ignore[attr-defined]


def test_a_link_its_server_cannot_read_says_why(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    linked_reply(gui, upstream, qtbot, "nowhere://missing")
    qtbot.waitUntil(lambda: len(link_items(gui)) == 1, timeout=5_000)
    activate(gui, qtbot, link_items(gui)[0])
    viewer = viewer_of(gui, qtbot, ResourceViewer)
    qtbot.waitUntil(lambda: viewer.note.isVisible(), timeout=10_000)
    assert viewer.note.text().startswith("It cannot be shown: ")
    assert viewer.text.toPlainText() == ""
    viewer.close()
    assert gui.opened == []  # type: ignore[attr-defined]


def test_a_long_linked_text_is_shown_cut_with_what_was_left_out_said(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    linked_reply(gui, upstream, qtbot, "big://huge")
    qtbot.waitUntil(lambda: len(link_items(gui)) == 1, timeout=5_000)
    activate(gui, qtbot, link_items(gui)[0])
    viewer = viewer_of(gui, qtbot, ResourceViewer)
    qtbot.waitUntil(lambda: viewer.text.toPlainText() != "", timeout=10_000)
    shown = viewer.text.toPlainText()
    assert set(shown) == {"h"} and len(shown) < 2_000_000  # bounded, as an attachment is
    assert viewer.note.isVisible()
    assert viewer.note.text().startswith("Only the first ") and "2,000,000" in viewer.note.text()
    assert not viewer.note.text().startswith("It cannot be shown")
    viewer.close()
