"""An MCP server's entry as a form, beside its JSON in the MCP servers dialog: a program to
run (command, its arguments one a row, its environment as name and value rows, the folder it
runs in) or a URL to reach (and its headers as rows). The dialog keeps the two in step: the
form shows the JSON as it is typed (`show_entry`), and an edit in the form is announced
(`edited`) for the dialog to write `entry(...)` into the JSON. Keys the form does not show
(trust, timeouts, ...) are kept as they are in the JSON.

Values of the environment and of the headers are often secrets (API keys): shown as dots
until "Show values" is ticked.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

KINDS = ("A program on this computer (stdio)", "A URL (streamable HTTP)")
FORM_KEYS = ("command", "args", "env", "cwd", "url", "headers")
SECRET_KEYS = ("env", "headers")
DOTS = "•" * 8


class Rows(QWidget):
    """Rows of one value (arguments) or of a name and a value (environment, headers), with
    Add and Remove; `secret`: values shown as dots unless `reveal`ed."""

    edited = Signal()

    def __init__(self, columns: tuple[str, ...], name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(columns), self)
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setAccessibleName(name)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setMinimumHeight(72)
        self.add_button = QPushButton("Add", self)
        self.add_button.setAccessibleName(f"Add to {name.lower()}")
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setAccessibleName(f"Remove from {name.lower()}")
        buttons = QVBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.secret = False
        self._values: dict[int, str] = {}  # a secret's row -> its value (the cell shows dots)
        self._revealed = False
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.table.itemChanged.connect(self._on_table_item_changed)

    def rows(self) -> list[list[str]]:
        """Every row's cells, blank rows left out."""
        found = []
        for row in range(self.table.rowCount()):
            cells = [self._text(row, column) for column in range(self.table.columnCount())]
            if any(cell.strip() for cell in cells):
                found.append(cells)
        return found

    def show_rows(self, rows: list[list[str]]) -> None:
        with QSignalBlocker(self.table):
            self.table.setRowCount(0)
            self._values.clear()
            for cells in rows:
                self._append(cells)

    def reveal(self, shown: bool) -> None:
        rows = self._all()  # read as they are shown now, then shown the other way
        self._revealed = shown
        self.show_rows(rows)

    def _text(self, row: int, column: int) -> str:
        if self._hides(column) and row in self._values:
            return self._values[row]
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def _hides(self, column: int) -> bool:
        return self.secret and not self._revealed and column == self.table.columnCount() - 1

    def _append(self, cells: list[str]) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, text in enumerate(cells):
            shown = text
            if self._hides(column):
                self._values[row] = text
                shown = DOTS if text else ""
            self.table.setItem(row, column, QTableWidgetItem(shown))

    def _on_add_button_clicked(self) -> None:
        with QSignalBlocker(self.table):
            self._append([""] * self.table.columnCount())
        row = self.table.rowCount() - 1
        self.table.setCurrentCell(row, 0)
        item = self.table.item(row, 0)
        if item is not None:
            self.table.editItem(item)

    def _on_remove_button_clicked(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            return
        kept = [cells for index, cells in enumerate(self._all()) if index != row]
        self.show_rows(kept)
        self.edited.emit()

    def _all(self) -> list[list[str]]:
        columns = range(self.table.columnCount())
        return [[self._text(r, c) for c in columns] for r in range(self.table.rowCount())]

    def _on_table_item_changed(self, item: QTableWidgetItem) -> None:
        if self._hides(item.column()):  # a secret typed in: kept, and shown as dots
            self._values[item.row()] = item.text()
            with QSignalBlocker(self.table):
                item.setText(DOTS if item.text() else "")
        self.edited.emit()


class ServerEntryForm(QWidget):
    edited = Signal()  # by the user: the dialog writes `entry(...)` into the JSON

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = QComboBox(self)
        self.kind.addItems(KINDS)
        self.kind.setAccessibleName("How Parley reaches the server")
        self.command = QLineEdit(self)
        self.command.setAccessibleName("Command")
        self.command.setPlaceholderText("e.g. npx, uvx, or /path/to/server")
        self.args = Rows(("Argument",), "Arguments", self)
        self.env = Rows(("Name", "Value"), "Environment", self)
        self.env.secret = True
        self.cwd = QLineEdit(self)
        self.cwd.setAccessibleName("Runs in folder")
        self.cwd.setPlaceholderText("(optional) the folder it runs in")
        self.url = QLineEdit(self)
        self.url.setAccessibleName("URL")
        self.url.setPlaceholderText("https://example.com/mcp")
        self.headers = Rows(("Header", "Value"), "Headers", self)
        self.headers.secret = True
        self.show_values = QCheckBox("Show values", self)
        self.show_values.setAccessibleName("Show the environment's and headers' values")

        program = QWidget(self)
        program_form = QFormLayout(program)
        program_form.setContentsMargins(0, 0, 0, 0)
        program_form.addRow("Command", self.command)
        program_form.addRow("Arguments", self.args)
        program_form.addRow("Environment", self.env)
        program_form.addRow("Runs in", self.cwd)
        remote = QWidget(self)
        remote_form = QFormLayout(remote)
        remote_form.setContentsMargins(0, 0, 0, 0)
        remote_form.addRow("URL", self.url)
        remote_form.addRow("Headers", self.headers)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(program)
        self.pages.addWidget(remote)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.kind)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.show_values)

        self.kind.currentIndexChanged.connect(self._on_kind_current_index_changed)
        for field in (self.command, self.cwd, self.url):
            field.textEdited.connect(lambda _text: self.edited.emit())
        for rows in (self.args, self.env, self.headers):
            rows.edited.connect(self.edited)
        self.show_values.toggled.connect(self._on_show_values_toggled)

    def is_url(self) -> bool:
        return self.kind.currentIndex() == 1

    def show_entry(self, entry: dict[str, Any]) -> None:
        """Show an entry (the JSON as it is now); what is not a string where one belongs
        is shown blank (the JSON is the place to fix it)."""
        with QSignalBlocker(self.kind):
            self.kind.setCurrentIndex(1 if "url" in entry and "command" not in entry else 0)
            self.pages.setCurrentIndex(self.kind.currentIndex())
        self.command.setText(_text(entry.get("command")))
        self.cwd.setText(_text(entry.get("cwd")))
        self.url.setText(_text(entry.get("url")))
        args = entry.get("args")
        self.args.show_rows([[_text(a)] for a in args] if isinstance(args, list) else [])
        for rows, key in ((self.env, "env"), (self.headers, "headers")):
            found = entry.get(key)
            pairs = found.items() if isinstance(found, dict) else []
            rows.show_rows([[_text(k), _text(v)] for k, v in pairs])

    def entry(self, base: dict[str, Any]) -> dict[str, Any]:
        """`base` (the JSON as it was) with the form's keys as the form shows them."""
        entry = {k: v for k, v in base.items() if k not in FORM_KEYS}
        if self.is_url():
            entry["url"] = self.url.text().strip()
            headers = dict((name.strip(), value) for name, value in self.headers.rows())
            if headers:
                entry["headers"] = headers
            return entry
        entry["command"] = self.command.text().strip()
        entry["args"] = [value for (value,) in self.args.rows()]
        entry["env"] = dict((name.strip(), value) for name, value in self.env.rows())
        if self.cwd.text().strip():
            entry["cwd"] = self.cwd.text().strip()
        return entry

    def _on_kind_current_index_changed(self, index: int) -> None:
        self.pages.setCurrentIndex(index)
        self.edited.emit()

    def _on_show_values_toggled(self, shown: bool) -> None:
        self.env.reveal(shown)
        self.headers.reveal(shown)


def masked(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry with its environment's and headers' values shown as dots (the JSON beside
    the form hides what the form hides)."""
    shown = dict(entry)
    for key in SECRET_KEYS:
        found = entry.get(key)
        if isinstance(found, dict):
            shown[key] = {name: DOTS if value else value for name, value in found.items()}
    return shown


Secrets = dict[tuple[str, str], str]  # ("env" or "headers", a name) -> its value


def secrets_of(entry: dict[str, Any]) -> Secrets:
    """The entry's environment and header values that are known (not dots)."""
    found: Secrets = {}
    for key in SECRET_KEYS:
        values = entry.get(key)
        if isinstance(values, dict):
            for name, value in values.items():
                if isinstance(value, str) and value != DOTS:
                    found[(key, name)] = value
    return found


def unmasked(entry: dict[str, Any], secrets: Secrets) -> dict[str, Any]:
    """The entry read from the JSON, each value still shown as dots given back from
    `secrets` (a value typed over the dots is the new value; dots under a name with no known
    value stay dots: `hidden_unknown` names them)."""
    full = dict(entry)
    for key in SECRET_KEYS:
        found = entry.get(key)
        if isinstance(found, dict):
            full[key] = {
                name: secrets.get((key, name), value) if value == DOTS else value
                for name, value in found.items()
            }
    return full


def hidden_unknown(entry: dict[str, Any]) -> list[str]:
    """The names whose value is dots that stand for nothing known (a name renamed, say)."""
    return [
        name
        for key in SECRET_KEYS
        if isinstance(entry.get(key), dict)
        for name, value in entry[key].items()
        if value == DOTS
    ]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
