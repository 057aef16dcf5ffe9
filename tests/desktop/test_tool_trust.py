"""Trust in the MCP servers dialog: each tool's choice (ask / once per chat / always allow /
never / the server's default) is saved at once and decides whether its calls ask; a choice
the server could not save goes back; the server's own trust is written into its entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from desktop.tools.tools_dialog import ToolsDialog
from tests.desktop.conftest import GuiApp, calls, danger, run
from tests.desktop.test_accessibility import controls, spoken_name
from tests.support.tools import TOOL_COUNT, ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


def open_dialog(gui: GuiApp, qtbot: Any) -> ToolsDialog:
    """The MCP servers dialog, the server `t` chosen and its tools listed."""
    gui.window.menus.tools.trigger()
    qtbot.waitUntil(lambda: gui.window.findChild(ToolsDialog) is not None, timeout=5_000)
    dialog = gui.window.findChild(ToolsDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)
    dialog.table.selectRow(0)
    qtbot.waitUntil(lambda: dialog.tools_table.rowCount() == TOOL_COUNT, timeout=5_000)
    return dialog


def close(dialog: ToolsDialog) -> None:
    dialog.reject()
    QApplication.processEvents()


def choose(dialog: ToolsDialog, tool: str, label: str) -> None:
    box = dialog.tools_table.box_of(tool)
    index = box.findText(label)
    assert index >= 0, label
    box.setCurrentIndex(index)  # as a pick from its list does


def danger_info(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None
    server = run(qtbot, client.tools())["servers"][0]
    found: dict[str, Any] = next(t for t in server["tools"] if t["name"] == "danger")
    return found


def last_step(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    reply = run(qtbot, client.conversation(gui.window.current_id))["messages"][-1]
    step: dict[str, Any] = next(p for p in reply["parts"] if p["type"] == "tool")
    return step


def test_a_tools_choice_decides_whether_its_calls_ask(
    asking_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = asking_gui
    card = gui.window.approval_card
    dialog = open_dialog(gui, qtbot)
    assert dialog.table.item(0, 2).text() == "asks first"
    box = dialog.tools_table.box_of("danger")
    assert box.currentText() == "Server default (ask)"
    assert [box.itemText(i) for i in range(box.count())] == [
        "Server default (ask)", "Ask every time", "Ask once per chat", "Always allow", "Never",
    ]  # fmt: skip
    unnamed = [type(w).__name__ for w in controls(dialog) if not spoken_name(w)]
    assert not unnamed

    # Always allow: saved at once, and a call runs without the approval card.
    choose(dialog, "danger", "Always allow")
    qtbot.waitUntil(lambda: dialog.message.text() == "danger of t: Always allow.", timeout=5_000)
    info = danger_info(gui, qtbot)
    assert (info["trust"], info["trust_override"]) == ("allow", "allow")
    assert box.currentText() == "Always allow"
    close(dialog)
    upstream.queue = [Script(tool_calls=[danger("the garden")]), Script(texts=["Done."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("do it")
    assert not card.isVisible()
    assert calls(tool_log) == ["the garden"]
    assert last_step(gui, qtbot)["status"] == "completed"

    # Never: refused without asking; the model is told.
    dialog = open_dialog(gui, qtbot)
    assert dialog.tools_table.box_of("danger").currentText() == "Always allow"
    choose(dialog, "danger", "Never")
    qtbot.waitUntil(lambda: danger_info(gui, qtbot)["trust"] == "never", timeout=5_000)
    close(dialog)
    upstream.queue = [Script(tool_calls=[danger("the house")]), Script(texts=["Not allowed."])]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        gui.send("do it again")
    assert not card.isVisible()
    assert calls(tool_log) == ["the garden"]
    assert last_step(gui, qtbot)["status"] == "denied"

    # The server's default again: the call waits for the user.
    dialog = open_dialog(gui, qtbot)
    choose(dialog, "danger", "Server default (ask)")
    qtbot.waitUntil(lambda: danger_info(gui, qtbot)["trust_override"] is None, timeout=5_000)
    assert danger_info(gui, qtbot)["trust"] == "ask"
    close(dialog)
    upstream.queue = [Script(tool_calls=[danger("the shed")]), Script(texts=["Ok."])]
    gui.send("and once more")
    qtbot.waitUntil(card.isVisible, timeout=15_000)
    assert calls(tool_log) == ["the garden"]
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        card.deny.click()
    assert calls(tool_log) == ["the garden"]


def test_a_choice_that_could_not_be_saved_goes_back(
    asking_gui: GuiApp, data_dir: Path, qtbot: Any
) -> None:
    gui = asking_gui
    dialog = open_dialog(gui, qtbot)
    # The configuration cannot be changed: a folder where its file was (it is read again
    # before each change, issue 37, so this is refused before anything is written).
    config = data_dir / "mcp.json"
    config.unlink()
    (config / "in-the-way").mkdir(parents=True)
    choose(dialog, "danger", "Never")
    qtbot.waitUntil(lambda: "is not changed" in dialog.message.text(), timeout=5_000)
    box = dialog.tools_table.box_of("danger")
    assert box.currentText() == "Server default (ask)"
    assert danger_info(gui, qtbot)["trust_override"] is None
    close(dialog)


def test_the_servers_trust_is_written_into_its_entry(
    asking_gui: GuiApp, data_dir: Path, qtbot: Any
) -> None:
    gui = asking_gui
    dialog = open_dialog(gui, qtbot)
    assert dialog.server_trust.currentText() == "Ask before each call"
    dialog.server_trust.setCurrentIndex(
        dialog.server_trust.findText("Allow every call without asking")
    )
    assert json.loads(dialog.entry_edit.toPlainText())["trust"] == "allow"
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.table.item(0, 2).text() == "allowed", timeout=5_000)
    qtbot.waitUntil(lambda: dialog.tools_table.rowCount() == TOOL_COUNT, timeout=30_000)
    assert dialog.tools_table.box_of("danger").currentText() == "Server default (allow)"
    assert json.loads(config_text(data_dir))["mcpServers"]["t"]["trust"] == "allow"

    # Typed into the JSON, the choice follows.
    dialog.entry_edit.setPlainText(json.dumps({"command": "x", "trust": "ask"}))
    assert dialog.server_trust.currentText() == "Ask before each call"
    dialog.entry_edit.setPlainText("{not json")
    dialog.server_trust.setCurrentIndex(1)
    assert "not valid JSON" in dialog.message.text()
    assert dialog.server_trust.currentText() == "Ask before each call"
    close(dialog)


def config_text(data_dir: Path) -> str:
    return (data_dir / "mcp.json").read_text(encoding="utf-8")
