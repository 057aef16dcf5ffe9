"""What tools cost a chat's prompt (issue 42): the MCP servers dialog says what each server's
tools' definitions take of every prompt; a chat's settings choose which servers' tools it
offers (every one by default), and its context meter counts only those."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from tests.desktop.conftest import GuiApp, run, with_tools
from tests.desktop.test_tools_dialog import open_tools
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

COST = re.compile(r"~[\d.]+k? tokens")


@pytest.fixture
def tools_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    return with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")


def test_the_servers_dialog_shows_what_each_servers_tools_cost_a_prompt(
    tools_gui: GuiApp, qtbot: Any
) -> None:
    dialog = open_tools(tools_gui, qtbot)
    headers = [
        dialog.table.horizontalHeaderItem(c).text() for c in range(dialog.table.columnCount())
    ]
    column = headers.index("Prompt cost")
    qtbot.waitUntil(lambda: dialog.table.item(0, column) is not None, timeout=5_000)
    assert COST.fullmatch(dialog.table.item(0, column).text())


def measured_chat(gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any) -> Any:
    """A chat of one exchange whose meter counts its tools' definitions; the meter."""
    upstream.queue = [Script(texts=["Hi."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=20_000):
        gui.send("Hello")
    meter = gui.window.model_view.meter
    qtbot.waitUntil(lambda: "(2 messages)" in meter.toolTip(), timeout=5_000)
    assert "Tools' definitions: 0 tokens" not in meter.toolTip()
    return meter


def test_a_chat_offers_only_the_servers_ticked_in_its_settings(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    meter = measured_chat(gui, upstream, qtbot)

    gui.window.menus.chat_settings.trigger()
    settings = gui.window.chat_settings
    qtbot.waitUntil(lambda: settings.dialog is not None and settings.dialog.isVisible())
    assert settings.dialog is not None
    box = settings.dialog.tool_servers.boxes["t"]
    assert box.isChecked() and COST.search(box.text())  # every server, by default
    box.setChecked(False)
    with qtbot.waitSignal(settings.saved, timeout=5_000):
        buttons = settings.dialog.findChild(QDialogButtonBox)
        buttons.button(QDialogButtonBox.StandardButton.Save).click()
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    stored = run(qtbot, client.conversation(gui.window.current_id, limit=1))
    assert stored["tool_servers"] == []
    qtbot.waitUntil(lambda: "Tools' definitions: 0 tokens" in meter.toolTip(), timeout=5_000)


def test_the_meter_counts_the_tools_again_once_the_tools_switch_is_saved(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    meter = measured_chat(gui, upstream, qtbot)
    gui.window.tools_switch.setChecked(False)  # no tools offered: their cost goes
    qtbot.waitUntil(lambda: "Tools' definitions: 0 tokens" in meter.toolTip(), timeout=5_000)
    gui.window.tools_switch.setChecked(True)
    qtbot.waitUntil(lambda: "Tools' definitions: 0 tokens" not in meter.toolTip(), timeout=5_000)
