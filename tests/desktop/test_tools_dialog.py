"""MCP servers → Save: the message follows the server's start (ready with its tools, or why
it failed), and the saved server is chosen with its tools listed, no click needed (issue 43)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.tools.tools_dialog import ToolsDialog
from tests.desktop.conftest import GuiApp
from tests.support.tools import TOOL_COUNT, ToolLog, tool_server

pytestmark = pytest.mark.slow


def open_tools(gui: GuiApp, qtbot: Any) -> ToolsDialog:
    gui.window.menus.tools.trigger()
    qtbot.waitUntil(lambda: gui.window.findChild(ToolsDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(ToolsDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.config_line.text() != "", timeout=5_000)
    return dialog


def test_saving_a_server_follows_its_start_and_lists_its_tools(
    gui: GuiApp, qtbot: Any, tool_log: ToolLog
) -> None:
    dialog = open_tools(gui, qtbot)
    dialog.name_edit.setText("t")
    dialog.entry_edit.setPlainText(json.dumps(tool_server(tool_log.path)))
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    qtbot.waitUntil(lambda: dialog.table.item(0, 1).text().startswith("ready"), timeout=30_000)
    assert dialog.message.text() == f"t is ready with {TOOL_COUNT} tools."  # not "starting"
    assert dialog.selected() == "t"
    assert dialog.tools_table.rowCount() == TOOL_COUNT  # without a click on its row
    dialog.reject()


def test_a_server_that_fails_to_start_says_why_in_the_message(
    gui: GuiApp, qtbot: Any, tmp_path: Path
) -> None:
    dialog = open_tools(gui, qtbot)
    dialog.name_edit.setText("broken")
    missing = str(tmp_path / "no-such-program")
    dialog.entry_edit.setPlainText(json.dumps({"command": missing}))
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    qtbot.waitUntil(lambda: dialog.table.item(0, 1).text().startswith("error"), timeout=30_000)
    assert dialog.message.text().startswith("broken did not start:")
    dialog.reject()
