"""Tools: the MCP servers the model may call, how each is doing, and their entries to add,
change or remove (Settings → MCP servers).

An entry is edited as the JSON the ecosystem uses (`{"command": ..., "args": [...], "env":
{...}}` or `{"url": ...}`), so one copied from another app's instructions works as it is.
The dialog only shows and asks: its controller calls the server and answers with
`show_tools`, `show_error` or `show_note`.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types import ToolServerJSON, ToolsJSON

COLUMNS = ("Server", "State", "Runs")
NEW_ENTRY = '{\n  "command": "",\n  "args": [],\n  "env": {}\n}'
SAFETY = (
    "Only the servers listed here ever run, each with none of Parley's secrets. What a "
    "server offers is listed below before any chat uses it, and every call's arguments and "
    "result are kept in the reply (its \u201cdetails\u201d link)."
)


def describe_state(server: ToolServerJSON) -> str:
    state = server["state"]
    if state == "ready":
        count = len(server["tools"])
        return f"ready with {count} tool{'s' if count != 1 else ''}"
    if state == "error":
        return f"error: {server['error']}"
    if state == "starting":
        return "starting…" + (f" (restart {server['restarts']})" if server["restarts"] else "")
    return "disabled"


def describe_runs(server: ToolServerJSON) -> str:
    config = server["config"]
    if "url" in config:
        return config["url"]
    return " ".join([config.get("command", ""), *config.get("args", [])]).strip()


def describe_server(server: ToolServerJSON) -> str:
    """The details shown for the selected server: its tools, then its last stderr lines."""
    lines = [f"{server['name']}: {describe_state(server)}", ""]
    for tool in server["tools"]:
        lines.append(f"• {tool['name']} — {tool['description'].strip() or '(no description)'}")
    if server["stderr_tail"]:
        lines += ["", "Its last lines on stderr:", *server["stderr_tail"]]
    return "\n".join(lines)


class ToolsDialog(ServerDialog):
    save_requested = Signal(str, dict)  # a server's name, its entry
    remove_requested = Signal(str)  # a server's name

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tools — MCP servers")
        self.setObjectName("tools-dialog")
        self.resize(860, 620)
        self._servers: list[ToolServerJSON] = []
        self.config_line = QLabel(self)
        self.config_line.setWordWrap(True)
        self.config_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        safety = QLabel(SAFETY, self)
        safety.setWordWrap(True)
        self.table = rows_table(COLUMNS, "MCP servers", self)
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        self.details.setAccessibleName("The selected server's tools and log")
        self.message = MessageLine("tools-message", self)

        self.name_edit = QLineEdit(self)
        self.name_edit.setAccessibleName("Server name")
        self.name_edit.setPlaceholderText("e.g. files")
        self.entry_edit = QPlainTextEdit(self)
        self.entry_edit.setAccessibleName("Server entry (JSON)")
        self.entry_edit.setPlainText(NEW_ENTRY)
        self.save_button = QPushButton("Save server", self)
        self.new_button = QPushButton("New", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setEnabled(False)
        editor = QGroupBox("Add or change a server", self)
        form = QFormLayout(editor)
        form.addRow("Name", self.name_edit)
        form.addRow("Entry", self.entry_edit)
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addWidget(self.save_button)
        row.addStretch(1)
        row.addWidget(self.remove_button)
        form.addRow(row)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.config_line)
        layout.addWidget(safety)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.details, 2)
        layout.addWidget(self.message)
        layout.addWidget(editor, 2)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.new_button.clicked.connect(self._on_new_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)

    def show_tools(self, tools: ToolsJSON) -> None:
        chosen = self.selected()
        where = f"Configuration: {tools['config_path']}"
        if tools["config_error"]:
            where += f"\nIt cannot be read, so no server runs: {tools['config_error']}"
        self.config_line.setText(where)
        self._servers = tools["servers"]
        self.table.setRowCount(len(self._servers))
        for row, server in enumerate(self._servers):
            cells = (server["name"], describe_state(server), describe_runs(server))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setData(Qt.ItemDataRole.UserRole, server["name"])
                self.table.setItem(row, column, item)
            if server["name"] == chosen:
                self.table.selectRow(row)
        self._show_details()

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _server(self, name: str | None) -> ToolServerJSON | None:
        return next((s for s in self._servers if s["name"] == name), None)

    def _show_details(self) -> None:
        server = self._server(self.selected())
        self.remove_button.setEnabled(server is not None)
        text = describe_server(server) if server is not None else ""
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def _on_table_selection_changed(self) -> None:
        server = self._server(self.selected())
        if server is not None:  # edit the chosen one
            self.name_edit.setText(server["name"])
            self.entry_edit.setPlainText(json.dumps(server["config"], indent=2))
        self._show_details()

    def _on_new_button_clicked(self) -> None:
        self.table.clearSelection()
        self.name_edit.clear()
        self.entry_edit.setPlainText(NEW_ENTRY)
        self.name_edit.setFocus()

    def _on_save_button_clicked(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            self.show_error("Give the server a name.")
            return
        try:
            entry = json.loads(self.entry_edit.toPlainText())
        except ValueError as exc:
            self.show_error(f"The entry is not valid JSON: {exc}")
            return
        if not isinstance(entry, dict):
            self.show_error('The entry must be a JSON object, like {"command": "...", "args": []}.')
            return
        self.save_requested.emit(name, entry)

    def _on_remove_button_clicked(self) -> None:
        name = self.selected()
        if name is not None:
            self.remove_requested.emit(name)
