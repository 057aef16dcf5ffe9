"""Adding an MCP server (issue 43): a form beside the entry's JSON, the two kept in step, and
"Import from other apps…" listing another app's servers (secrets masked) to add."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QTableWidgetItem

from desktop.tools.import_servers_dialog import ImportServersDialog
from desktop.tools.server_entry_form import DOTS
from desktop.tools.tools_dialog import ToolsDialog
from server.tools.importing import MASK
from tests.desktop.conftest import GuiApp, run
from tests.desktop.test_tools_dialog import open_tools
from tests.support.tools import TOOL_COUNT, ToolLog, tool_server


def entry(dialog: ToolsDialog) -> dict[str, Any]:
    found = dialog.entry()
    assert found is not None
    return found


def type_row(rows: Any, *cells: str) -> None:
    rows.add_button.click()
    row = rows.table.rowCount() - 1
    for column, text in enumerate(cells):
        rows.table.setItem(row, column, QTableWidgetItem(text))  # as an edit commits it


def test_the_form_writes_the_json_and_the_json_fills_the_form(qtbot: Any) -> None:
    dialog = ToolsDialog()
    qtbot.addWidget(dialog)
    form = dialog.form
    dialog.entry_edit.setPlainText('{"command": "", "trust": "allow", "timeout": 30}')
    qtbot.keyClicks(form.command, "npx")
    type_row(form.args, "-y")
    type_row(form.args, "@modelcontextprotocol/server-filesystem")
    type_row(form.env, "API_KEY", "sk-secret")
    assert entry(dialog) == {
        "trust": "allow", "timeout": 30,  # kept: the form does not show them
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"],
        "env": {"API_KEY": "sk-secret"},
    }  # fmt: skip
    assert form.env.table.item(0, 1).text() == DOTS  # a secret, shown as dots
    assert "sk-secret" not in dialog.entry_edit.toPlainText()  # in the JSON too
    assert json.loads(dialog.entry_edit.toPlainText())["env"] == {"API_KEY": DOTS}
    form.show_values.setChecked(True)
    assert form.env.table.item(0, 1).text() == "sk-secret"
    assert json.loads(dialog.entry_edit.toPlainText())["env"] == {"API_KEY": "sk-secret"}
    form.show_values.setChecked(False)
    form.args.table.setCurrentCell(0, 0)
    form.args.remove_button.click()
    assert entry(dialog)["args"] == ["@modelcontextprotocol/server-filesystem"]

    dialog.entry_edit.setPlainText(
        json.dumps({"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}})
    )
    assert form.is_url() and form.url.text() == "https://example.com/mcp"
    assert form.headers.rows() == [["Authorization", "Bearer x"]]
    dialog.entry_edit.setPlainText('{"url": "https://exa')  # being typed: the form waits
    assert form.url.text() == "https://example.com/mcp"

    form.kind.setCurrentIndex(0)  # a program instead: the JSON follows the form
    assert entry(dialog) == {"command": "", "args": [], "env": {}}


def test_the_json_hides_what_the_form_hides_and_keeps_it(qtbot: Any) -> None:
    dialog = ToolsDialog()
    qtbot.addWidget(dialog)
    secret = {"command": "srv", "env": {"API_KEY": "sk-secret", "EMPTY": ""}, "trust": "ask"}
    dialog.show_entry(secret)
    text = dialog.entry_edit.toPlainText()
    assert "sk-secret" not in text and json.loads(text)["env"] == {"API_KEY": DOTS, "EMPTY": ""}
    assert entry(dialog) == secret  # the dots stand for the value kept

    # An edit of the JSON elsewhere keeps the hidden value; a value typed over it replaces it.
    dialog.entry_edit.setPlainText(text.replace('"srv"', '"srv2"'))
    assert entry(dialog)["env"]["API_KEY"] == "sk-secret"
    assert dialog.form.command.text() == "srv2"
    dialog.entry_edit.setPlainText(dialog.entry_edit.toPlainText().replace(DOTS, "sk-new", 1))
    assert entry(dialog)["env"]["API_KEY"] == "sk-new"
    dialog.form.show_values.setChecked(True)
    assert json.loads(dialog.entry_edit.toPlainText())["env"]["API_KEY"] == "sk-new"

    # The trust choice rewrites the JSON: the secret stays hidden and whole.
    dialog.form.show_values.setChecked(False)
    dialog.server_trust.chosen.emit("allow")
    assert "sk-new" not in dialog.entry_edit.toPlainText()
    assert entry(dialog)["env"] == {"API_KEY": "sk-new", "EMPTY": ""}
    assert entry(dialog)["trust"] == "allow"

    # Its line deleted (the JSON still valid) and put back: the value is still known.
    shown = dialog.entry_edit.toPlainText()
    dialog.entry_edit.setPlainText(shown.replace(f'"API_KEY": "{DOTS}",', ""))
    assert "API_KEY" not in entry(dialog)["env"]
    dialog.entry_edit.setPlainText(shown)
    assert entry(dialog)["env"]["API_KEY"] == "sk-new"

    # Renamed under its dots: nothing stands behind them, so Save says so, nothing is saved.
    dialog.entry_edit.setPlainText(shown.replace('"API_KEY"', '"API_KEYS"'))
    assert dialog.entry() is None
    assert "API_KEYS is hidden and not known" in dialog.message.text()
    saved: list[object] = []
    dialog.save_requested.connect(lambda name, body: saved.append(body))
    dialog.name_edit.setText("s")
    dialog.save_button.click()
    assert saved == []


def test_values_shown_then_hidden_while_the_json_is_being_typed_are_hidden_once_it_reads(
    qtbot: Any,
) -> None:
    dialog = ToolsDialog()
    qtbot.addWidget(dialog)
    dialog.form.show_values.setChecked(True)
    dialog.show_entry({"command": "srv", "env": {"API_KEY": "sk-secret"}})
    typed = dialog.entry_edit.toPlainText()
    dialog.entry_edit.setPlainText(typed[:-1])  # mid-edit: not JSON
    dialog.form.show_values.setChecked(False)
    assert "sk-secret" in dialog.entry_edit.toPlainText()  # left as typed, for now
    dialog.entry_edit.setPlainText(typed)  # readable again: hidden as asked
    assert "sk-secret" not in dialog.entry_edit.toPlainText()
    assert entry(dialog)["env"] == {"API_KEY": "sk-secret"}


def test_another_servers_entry_does_not_take_the_last_ones_secrets(qtbot: Any) -> None:
    dialog = ToolsDialog()
    qtbot.addWidget(dialog)
    dialog.show_entry({"command": "a", "env": {"API_KEY": "sk-of-a"}}, fresh=True)
    dialog.new_button.click()
    dialog.entry_edit.setPlainText(json.dumps({"command": "b", "env": {"API_KEY": DOTS}}))
    assert dialog.entry() is None  # the dots are not a's key


def test_a_server_made_in_the_form_is_saved_and_runs(
    gui: GuiApp, qtbot: Any, tool_log: ToolLog
) -> None:
    dialog = open_tools(gui, qtbot)
    server = tool_server(tool_log.path)
    dialog.name_edit.setText("t")
    qtbot.keyClicks(dialog.form.command, server["command"])
    for argument in server["args"]:
        type_row(dialog.form.args, argument)
    type_row(dialog.form.env, "PYTHONPATH", server["env"]["PYTHONPATH"])
    qtbot.keyClicks(dialog.form.cwd, server["cwd"])
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.message.text().startswith("t is ready"), timeout=30_000)
    assert dialog.tools_table.rowCount() == TOOL_COUNT
    dialog.reject()


@pytest.mark.slow
def test_servers_of_another_app_are_listed_masked_and_added_when_ticked(
    gui: GuiApp, qtbot: Any, tool_log: ToolLog, tmp_path: Path, monkeypatch: Any
) -> None:
    home = tmp_path / "home"
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    mine = tool_server(tool_log.path)
    mine["env"]["SECRET_TOKEN"] = "sk-do-not-show"
    claude.write_text(json.dumps({"mcpServers": {
        "My tools": mine, "broken": {"args": ["no command"]}, "t": {"command": "true"},
    }}))  # fmt: skip
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text("{ not json")
    monkeypatch.setenv("HOME", str(home))
    dialog = open_tools(gui, qtbot)
    client = gui.window.client
    assert client is not None
    run(qtbot, client.put_tool_server("t", {"command": "true", "disabled": True}))  # taken
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=5_000)

    dialog.import_button.click()
    qtbot.waitUntil(lambda: dialog.findChild(ImportServersDialog) is not None, timeout=5_000)
    offer = dialog.findChild(ImportServersDialog)
    assert offer is not None
    items = {item.text(0): item for item in offer.items()}
    assert set(items) == {"My tools", "broken", "t"}
    assert "SECRET_TOKEN=" + MASK in items["My tools"].text(3)
    assert "sk-do-not-show" not in json.dumps([i.text(3) for i in items.values()])
    assert items["My tools"].text(1) == "My-tools"
    assert items["t"].text(1) == "t-2"  # Parley has a "t"
    assert not items["broken"].flags() & Qt.ItemFlag.ItemIsEnabled  # says why, not tickable
    assert "'command'" in items["broken"].text(2)
    top = offer.tree.topLevelItem(1)
    assert top is not None and "Cannot be read" in top.text(2)  # Cursor's file
    assert not offer.add_button.isEnabled()

    items["My tools"].setCheckState(0, Qt.CheckState.Checked)
    offer.add_button.click()
    qtbot.waitUntil(lambda: offer.message.text().startswith("Added My-tools"), timeout=10_000)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=5_000)
    config = Path(run(qtbot, client.tools())["config_path"])
    saved = json.loads(config.read_text())["mcpServers"]["My-tools"]
    assert saved["env"]["SECRET_TOKEN"] == "sk-do-not-show"  # read from the file, not the list

    def ready() -> bool:
        servers = run(qtbot, client.tools())["servers"]
        return any(s["name"] == "My-tools" and s["state"] == "ready" for s in servers)

    qtbot.waitUntil(ready, timeout=30_000)
    offer.reject()
    dialog.reject()
    QApplication.processEvents()
