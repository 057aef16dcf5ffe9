"""Attach → From a tool server…: the picker lists each running server's resources (name,
type, size), a filter keeps what matches, and a choice becomes a chip like a file's — the
server reads and uploads it, the chip waits for that, an image gets its thumbnail and the
same warning as a file for a model that cannot see images — and goes with the message.

The real window and embedded server, with tests/support/mcp_resources.py (an MCP server
written with the official SDK, over stdio) configured as the server `r`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from desktop.composer.attachment_chips import Chip
from desktop.composer.prompt_form import PromptForm
from desktop.composer.resource_picker import RESOURCE_ROLE, ResourcePicker
from server.models.bundled import BUNDLED_MODEL_NAME
from tests.desktop.conftest import GuiApp, run
from tests.support.resources import resources_server
from tests.support.tools import write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def resources_gui(gui_factory: Any, data_dir: Path, tmp_path: Path, qtbot: Any) -> GuiApp:
    """The window with the resources server `r` running."""
    write_config(data_dir / "mcp.json", {"r": resources_server(tmp_path / "resources.log")})
    gui: GuiApp = gui_factory()
    client = gui.window.client
    assert client is not None
    qtbot.waitUntil(lambda: run(qtbot, client.status())["tools"]["ready"] == 1, timeout=30_000)
    return gui


def open_picker(gui: GuiApp, qtbot: Any) -> ResourcePicker:
    gui.window.composer.attach_resource.trigger()  # Attach → From a tool server…
    qtbot.waitUntil(lambda: gui.window.findChild(ResourcePicker) is not None, timeout=5_000)
    picker = gui.window.findChild(ResourcePicker)
    assert picker is not None and picker.isVisible()
    qtbot.waitUntil(lambda: "resources" in heading(picker).text(0), timeout=10_000)
    return picker


def heading(picker: ResourcePicker) -> QTreeWidgetItem:
    item = picker.tree.topLevelItem(0)
    assert item is not None
    return item


def shown_rows(picker: ResourcePicker) -> list[tuple[str, str, str]]:
    top = heading(picker)
    rows = [top.child(i) for i in range(top.childCount())]
    return [(r.text(0), r.text(1), r.text(2)) for r in rows if r is not None and not r.isHidden()]


def chips(gui: GuiApp) -> list[Chip]:
    return gui.window.composer.chips_shown()


@pytest.mark.qt_log_ignore("This plugin does not support raise", "grabbing the keyboard")
def test_the_attach_button_offers_files_or_a_tool_servers_resources(
    resources_gui: GuiApp, qtbot: Any
) -> None:
    composer = resources_gui.window.composer
    composer.attach_button.click()
    qtbot.waitUntil(composer.attach_menu.isVisible, timeout=5_000)
    entries = [a.text() for a in composer.attach_menu.actions()]
    assert entries == ["Files…\tCtrl+Shift+A", "From a tool server…"]
    qtbot.keyClick(composer.attach_menu, Qt.Key.Key_Down)
    qtbot.keyClick(composer.attach_menu, Qt.Key.Key_Down)
    qtbot.keyClick(composer.attach_menu, Qt.Key.Key_Return)  # from the keyboard
    qtbot.waitUntil(lambda: resources_gui.window.findChild(ResourcePicker) is not None,
                    timeout=5_000)  # fmt: skip
    picker = resources_gui.window.findChild(ResourcePicker)
    assert picker is not None
    picker.reject()


def test_the_picker_lists_a_servers_resources_and_the_filter_keeps_what_matches(
    resources_gui: GuiApp, qtbot: Any
) -> None:
    picker = open_picker(resources_gui, qtbot)
    assert heading(picker).text(0) == "r — 6 resources"
    rows = shown_rows(picker)
    # Its title where it has one, its type, and its size when the server says it.
    assert ("Read me", "text/markdown", "") in rows
    assert ("dot", "image/png", "") in rows
    picker.filter.setText("READ")
    assert shown_rows(picker) == [("Read me", "text/markdown", "")]
    current = picker.tree.currentItem()
    assert current is not None and current.data(0, RESOURCE_ROLE)["uri"] == "docs://readme"
    assert picker.about.text() == "docs://readme — The project's readme."
    assert picker.attach_button.isEnabled()
    picker.filter.setText("nothing like it")
    assert shown_rows(picker) == [] and heading(picker).isHidden()
    picker.filter.setText("")
    picker.resize(620, 440)
    picker.reject()


def test_a_resource_chosen_is_a_chip_like_a_files_and_goes_with_the_message(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    picker = open_picker(gui, qtbot)
    picker.filter.setText("readme")
    qtbot.keyClick(picker.filter, Qt.Key.Key_Return)  # Enter in the filter: the one shown
    assert not picker.isVisible()
    qtbot.waitUntil(lambda: len(chips(gui)) == 1 and chips(gui)[0].state == "ready", timeout=10_000)
    (chip,) = chips(gui)
    assert chip.attachment is not None
    assert (chip.name, chip.attachment["kind"]) == ("readme", "text")
    frames = gui.window.composer.chips.chip_frames()
    assert frames[0].accessibleName().startswith("readme, ")
    upstream.queue = [Script(texts=["A readme."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("What does it say?")
    sent = str(upstream.records[-1].body["messages"])
    assert "Hello from the readme." in sent
    assert chips(gui) == []


def test_an_image_resource_has_its_thumbnail_and_warns_for_a_model_without_eyes(
    resources_gui: GuiApp, qtbot: Any
) -> None:
    gui = resources_gui
    picker_box = gui.window.model_picker
    qtbot.waitUntil(lambda: picker_box.combo.findText(BUNDLED_MODEL_NAME) >= 0, timeout=10_000)
    picker_box.combo.setCurrentIndex(picker_box.combo.findText(BUNDLED_MODEL_NAME))
    picker = open_picker(gui, qtbot)
    picker.filter.setText("image/png")
    assert [row[0] for row in shown_rows(picker)] == ["dot", "not a png"]
    qtbot.keyClick(picker.filter, Qt.Key.Key_Down)  # on to the list
    assert picker.tree.hasFocus()
    qtbot.keyClick(picker.tree, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(chips(gui)) == 1 and chips(gui)[0].state == "ready", timeout=10_000)
    (chip,) = chips(gui)
    assert chip.attachment is not None and chip.attachment["kind"] == "image"
    qtbot.waitUntil(lambda: chip.thumbnail is not None, timeout=5_000)
    frame = gui.window.composer.chips.chip_frames()[0]
    assert frame.toolTip() == "The chosen model cannot see images"

    # A blob that says it is a PNG and is not: refused on its chip, in the server's words.
    picker = open_picker(gui, qtbot)
    picker.filter.setText("not a png")
    qtbot.keyClick(picker.filter, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(chips(gui)) == 2 and chips(gui)[1].state != "uploading",
                    timeout=10_000)  # fmt: skip
    refused = chips(gui)[1]
    assert refused.state == "refused" and refused.reason
    assert [a["id"] for a in gui.window.composer.attachments()] == [chip.attachment["id"]]


def test_a_template_asks_what_goes_in_it_and_attaches_the_uri_so_made(
    resources_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = resources_gui
    picker = open_picker(gui, qtbot)
    assert ("note (notes://{name})", "text/plain", "fill in…") in shown_rows(picker)
    picker.filter.setText("notes://")
    qtbot.keyClick(picker.filter, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: gui.window.findChild(PromptForm) is not None, timeout=5_000)
    form = gui.window.findChild(PromptForm)
    assert form is not None and list(form.fields) == ["name"]
    assert form.use_button.text() == "Attach" and not form.use_button.isEnabled()
    qtbot.keyClicks(form.fields["name"], "shopping list")
    qtbot.keyClick(form.fields["name"], Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(chips(gui)) == 1 and chips(gui)[0].state == "ready", timeout=10_000)
    (chip,) = chips(gui)
    assert chip.name == "shopping list" and chip.attachment is not None
    upstream.queue = [Script(texts=["Noted."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("What is in it?")
    assert "the note shopping list" in str(upstream.records[-1].body["messages"])
