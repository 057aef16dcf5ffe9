"""Tools: the MCP servers the model may call, how each is doing, and their entries to add,
change or remove (Settings → MCP servers).

An entry is edited in a form (server_entry_form.py) or as the JSON the ecosystem uses
(`{"command": ..., "args": [...], "env": {...}}` or `{"url": ...}`), side by side and kept in
step, so one copied from another app's instructions works as it is; "Import from other
apps…" offers the servers Claude Desktop, Cursor, VS Code and Windsurf are set up with
(import_servers_dialog.py). Its `"trust"` ("ask" or "allow") is also offered as a choice,
written into the JSON. Each tool's own trust and effect are chosen in the table of the
selected server's tools (tool_trust.py) and saved at once, without restarting the server. A
remote server that needs a sign-in says so on its row, with Sign in (then Cancel while the
browser has the page, Sign out once signed in: sign_in_cell.py). Safety (tool_safety.py): the
guard switch and the chats' grants. The dialog only shows and asks: its controller calls the
server and answers with `show_tools`, `show_trust_saved`, `undo_trust`, `show_error` or
`show_note`.
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

from desktop.look.figures import tools_cost
from desktop.tools.server_entry_form import (
    Secrets,
    ServerEntryForm,
    hidden_unknown,
    masked,
    secrets_of,
    unmasked,
)
from desktop.tools.sign_in import sign_in_status, sign_in_words
from desktop.tools.sign_in_cell import SignInColumn, row_words
from desktop.tools.tool_safety import ToolSafety
from desktop.tools.tool_trust import ServerTrustBox, ToolTrustTable
from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types.tools import ToolServerJSON, ToolsJSON

COLUMNS = ("Server", "State", "Trust", "Prompt cost", "Sign-in", "Runs")
SIGN_IN_COLUMN = 4  # its cell is a widget (sign_in_cell.py): words and a button
NEW_ENTRY = '{\n  "command": "",\n  "args": [],\n  "env": {},\n  "trust": "ask"\n}'
SAFETY = (
    "Only the servers listed here ever run, each with none of Parley's secrets. What a "
    "server offers is listed below before any chat uses it, and every call's arguments and "
    "result are kept in the reply (its \u201cdetails\u201d link). Before a tool acts, Parley "
    'asks you, unless its server\'s entry says "trust": "allow" (then its tools run '
    "without asking) or the tool has a choice of its own, below."
)
TRUSTS = {"ask": "asks first", "allow": "allowed"}


def describe_state(server: ToolServerJSON) -> str:
    state = server["state"]
    if state == "needs_sign_in":
        return "needs sign-in"
    if state == "starting" and sign_in_status(server) == "waiting_for_browser":
        return "waiting for sign-in"
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
    """The details shown for the selected server: its state and trust, then its last stderr
    lines (its tools are in the table above)."""
    calls = "Parley asks before each call" if server["trust"] == "ask" else "calls run at once"
    lines = [
        f"{server['name']}: {describe_state(server)}",
        f'Trust "{server["trust"]}": {calls}, unless the tool has a choice of its own.',
    ]
    sign_in = server.get("sign_in")
    if sign_in is not None and sign_in["issuer"]:  # who the user signs in with, seen first
        lines.append(f"Signs in with {sign_in['issuer']} (its authorization server).")
    if sign_in is not None and sign_in["error"]:
        lines.append(f"Its last sign-in failed: {sign_in['error']}")
    if server["stderr_tail"]:
        lines += ["", "Its last lines on stderr:", *server["stderr_tail"]]
    return "\n".join(lines)


class ToolsDialog(ServerDialog):
    save_requested = Signal(str, object)  # a server's name, its entry
    remove_requested = Signal(str)  # a server's name
    trust_requested = Signal(str, str, object)  # a server's name, a tool's, its trust or None
    import_requested = Signal()  # "Import from other apps…"
    sign_in_acted = Signal(str, str)  # a server's name, "sign_in" | "cancel" | "sign_out"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tools — MCP servers")
        self.setObjectName("tools-dialog")
        self.resize(940, 860)
        self._servers: list[ToolServerJSON] = []
        self._starting: str | None = None  # a server just saved: its start is told here
        self._from_form = False  # the JSON is being written from the form
        # The entry's secret values seen (never forgotten while it is edited: a line deleted
        # and put back keeps its value), and whether the JSON is owed its dots again.
        self._secrets: Secrets = {}
        self._mask_owed = False
        self.config_line = QLabel(self)
        self.config_line.setWordWrap(True)
        self.config_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        safety = QLabel(SAFETY, self)
        safety.setWordWrap(True)
        self.table = rows_table(COLUMNS, "MCP servers", self)
        self.sign_ins = SignInColumn(self.table, SIGN_IN_COLUMN)
        self.tools_table = ToolTrustTable(self)
        self.safety = ToolSafety(self)  # its requests go to the controller directly
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        self.details.setAccessibleName("The selected server's state and log")
        self.message = MessageLine("tools-message", self)

        self.name_edit = QLineEdit(self)
        self.name_edit.setAccessibleName("Server name")
        self.name_edit.setPlaceholderText("e.g. files")
        self.form = ServerEntryForm(self)
        self.entry_edit = QPlainTextEdit(self)
        self.entry_edit.setAccessibleName("Server entry (JSON)")
        self.entry_edit.setPlainText(NEW_ENTRY)
        self.form.show_entry(json.loads(NEW_ENTRY))
        self.server_trust = ServerTrustBox(self)
        self.save_button = QPushButton("Save server", self)
        self.new_button = QPushButton("New", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setEnabled(False)
        self.import_button = QPushButton("Import from other apps…", self)
        self.import_button.setToolTip(
            "The MCP servers of Claude Desktop, Cursor, VS Code, Windsurf"
        )
        editor = QGroupBox("Add or change a server", self)
        form = QFormLayout(editor)
        form.addRow("Name", self.name_edit)
        entry = QHBoxLayout()
        entry.addWidget(self.form, 3)
        entry.addWidget(self.entry_edit, 2)
        form.addRow("Entry", entry)
        form.addRow("Its tools", self.server_trust)
        row = QHBoxLayout()
        row.addWidget(self.new_button)
        row.addWidget(self.save_button)
        row.addWidget(self.import_button)
        row.addStretch(1)
        row.addWidget(self.remove_button)
        form.addRow(row)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.config_line)
        layout.addWidget(safety)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.tools_table, 3)
        layout.addWidget(self.safety, 1)
        layout.addWidget(self.details, 1)
        layout.addWidget(self.message)
        layout.addWidget(editor, 2)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.new_button.clicked.connect(self._on_new_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.tools_table.trust_chosen.connect(self._on_tools_table_trust_chosen)
        self.entry_edit.textChanged.connect(self._on_entry_edit_text_changed)
        self.server_trust.chosen.connect(self._on_server_trust_chosen)
        self.form.edited.connect(self._on_form_edited)
        self.form.show_values.toggled.connect(self._on_show_values_toggled)
        self.import_button.clicked.connect(self.import_requested)
        self.sign_ins.acted.connect(self.sign_in_acted)
        self.sign_ins.sign_in_ended.connect(self._on_sign_ins_sign_in_ended)

    def show_saved(self, server: ToolServerJSON) -> None:
        """A server's entry was saved: it is chosen (its tools listed as they come), and the
        message follows its start until it is ready or failed."""
        self._starting = server["name"]
        self._servers = [s for s in self._servers if s["name"] != server["name"]] + [server]
        self.show_note(f"Saved {server['name']}; it is starting.")
        self._follow_start()

    def show_tools(self, tools: ToolsJSON) -> None:
        chosen = self.selected() or self._starting
        where = f"Configuration: {tools['config_path']}"
        if tools["config_error"]:
            where += f"\nIt cannot be read, so no server runs: {tools['config_error']}"
        self.config_line.setText(where)
        self._servers = tools["servers"]
        self.table.setRowCount(len(self._servers))
        for row, server in enumerate(self._servers):
            cells = (
                server["name"],
                describe_state(server),
                TRUSTS[server["trust"]],
                tools_cost(server.get("definition_tokens", 0)),
                row_words(server),
                describe_runs(server),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(sign_in_words(server) if column == SIGN_IN_COLUMN else text)
                item.setData(Qt.ItemDataRole.UserRole, server["name"])
                self.table.setItem(row, column, item)
            self.sign_ins.show(row, server)
            if server["name"] == chosen:
                self.table.selectRow(row)
        self._show_details()
        self._follow_start()

    def _follow_start(self) -> None:
        server = self._server(self._starting)
        if server is None or server["state"] == "starting":
            return
        self._starting = None
        if server["state"] == "error":
            self.show_error(f"{server['name']} did not start: {server['error']}")
        elif server["state"] == "ready":
            self.show_note(f"{server['name']} is {describe_state(server)}.")
        else:
            self.show_note(f"Saved {server['name']}; it is disabled, so it does not run.")

    def follow_sign_in(self, name: str) -> None:
        """A sign-in began: said here until it ends (the row follows it too)."""
        self.sign_ins.follow(name)
        self.show_note(f"Sign in to {name} in your browser; Parley waits for it to come back.")

    def _on_sign_ins_sign_in_ended(self, name: str, signed_in: bool, words: str) -> None:
        server = self._server(name)
        if not signed_in:
            self.show_error(f"{name}: {words}")
        elif server is not None:
            self.show_note(f"Signed in to {name}; it is {describe_state(server)}.")

    def show_trust_saved(self, server: ToolServerJSON, tool: str) -> None:
        """A tool's choice was saved: the server as it is now."""
        self.tools_table.settle(server["name"], tool)
        self._servers = [server if s["name"] == server["name"] else s for s in self._servers]
        self._show_details()

    def undo_trust(self, server: str, tool: str) -> None:
        """A tool's choice was not saved (the reason is shown): its stored value again."""
        self.tools_table.settle(server, tool)
        self._show_details()

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def names(self) -> set[str]:
        """The servers Parley has, by name."""
        return {s["name"] for s in self._servers}

    def _server(self, name: str | None) -> ToolServerJSON | None:
        return next((s for s in self._servers if s["name"] == name), None)

    def _show_details(self) -> None:
        server = self._server(self.selected())
        self.remove_button.setEnabled(server is not None)
        self.tools_table.show_server(server)
        self.safety.show_server(server)
        text = describe_server(server) if server is not None else ""
        if self.details.toPlainText() != text:
            self.details.setPlainText(text)

    def _on_table_selection_changed(self) -> None:
        server = self._server(self.selected())
        if server is not None:  # edit the chosen one
            self.name_edit.setText(server["name"])
            self.show_entry(dict(server["config"]), fresh=True)
        self._show_details()

    def _on_new_button_clicked(self) -> None:
        self.table.clearSelection()
        self.name_edit.clear()
        self.show_entry(json.loads(NEW_ENTRY), fresh=True)
        self.name_edit.setFocus()

    def _on_save_button_clicked(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            self.show_error("Give the server a name.")
            return
        entry = self.entry()
        if entry is not None:
            self.save_requested.emit(name, entry)

    def entry(self) -> dict[str, object] | None:
        """The entry being edited, or None with the reason shown."""
        try:
            entry = self._read_json()
        except ValueError as exc:
            self.show_error(f"The entry is not valid JSON: {exc}")
            return None
        if not isinstance(entry, dict):
            self.show_error('The entry must be a JSON object, like {"command": "...", "args": []}.')
            return None
        unknown = hidden_unknown(entry)
        if unknown:
            self.show_error(
                f"The value of {', '.join(unknown)} is hidden and not known (was it renamed?): "
                'type it, or tick "Show values".'
            )
            return None
        return entry

    def show_entry(self, entry: dict[str, object], *, fresh: bool = False) -> None:
        """Write an entry into the JSON box: its environment's and headers' values as dots
        unless the form's "Show values" is ticked (the full values are kept aside). `fresh`:
        another server's entry (the secrets seen so far are not its)."""
        if fresh:
            self._secrets = {}
        self._secrets.update(secrets_of(entry))
        self._mask_owed = False
        shown = entry if self.form.show_values.isChecked() else masked(entry)
        self.entry_edit.setPlainText(json.dumps(shown, indent=2, ensure_ascii=False))

    def _read_json(self) -> object:
        """The JSON box's value, a value still shown as dots given back in full."""
        entry = json.loads(self.entry_edit.toPlainText())
        return unmasked(entry, self._secrets) if isinstance(entry, dict) else entry

    def _on_show_values_toggled(self) -> None:
        try:
            entry = self._read_json()
        except ValueError:
            self._mask_owed = True  # shown as asked once the JSON can be read again
            return
        if isinstance(entry, dict):
            self.show_entry(entry)

    def _on_entry_edit_text_changed(self) -> None:
        try:
            entry = self._read_json()
        except ValueError:
            return  # being typed: the choice and the form stay as they were
        if isinstance(entry, dict):
            self._secrets.update(secrets_of(entry))
            if self._mask_owed:
                self.show_entry(entry)
                return
            self.server_trust.show_trust(entry.get("trust"))
            if not self._from_form:
                self.form.show_entry(entry)

    def _on_form_edited(self) -> None:
        """The form changed: the JSON written from it, its other keys kept (the JSON as it
        was last readable)."""
        try:
            base = self._read_json()
        except ValueError:
            base = {}
        entry = self.form.entry(base if isinstance(base, dict) else {})
        self._from_form = True
        try:
            self.show_entry(entry)
        finally:
            self._from_form = False

    def _on_server_trust_chosen(self, trust: str) -> None:
        entry = self.entry()
        if entry is None:  # the choice is written into the JSON: it must be readable
            self.server_trust.show_trust("ask" if trust == "allow" else "allow")
            return
        entry["trust"] = trust
        self.show_entry(entry)
        self.show_note("Written into the entry: Save server to use it (the server restarts).")

    def _on_tools_table_trust_chosen(self, server: str, tool: str, trust: object) -> None:
        self.trust_requested.emit(server, tool, trust)

    def _on_remove_button_clicked(self) -> None:
        name = self.selected()
        if name is not None:
            self.remove_requested.emit(name)
