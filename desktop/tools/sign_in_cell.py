"""The sign-in of each remote MCP server, on its row of the servers' table: its state in
words and the one thing to do about it — Sign in, Cancel (while the browser has the page),
Sign out. The cells are kept across refreshes (the table is shown again every second), so a
button the keyboard is on stays where it is."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTableWidget, QWidget

from desktop.tools.sign_in import sign_in_status, sign_in_words
from server.types.tools import ToolServerJSON


class SignInCell(QWidget):
    acted = Signal(str, str)  # the server's name, "sign_in" | "cancel" | "sign_out"

    def __init__(self, server: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server = server
        self.words = QLabel(self)
        self.button = QPushButton(self)
        # The row's own background shows through (its selection too).
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.words.setStyleSheet("background: transparent;")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.words, 1)
        layout.addWidget(self.button)
        self._action = ""
        self.button.clicked.connect(self._on_button_clicked)

    def show_server(self, server: ToolServerJSON) -> None:
        words = sign_in_words(server)
        self.words.setText(words)
        self.words.setToolTip(words)
        status = sign_in_status(server)
        action, label = {
            "needs_sign_in": ("sign_in", "Sign in"),
            "failed": ("sign_in", "Sign in"),
            "waiting_for_browser": ("cancel", "Cancel"),
            "signed_in": ("sign_out", "Sign out"),
        }.get(status or "", ("", ""))
        if action != self._action:
            self._action = action
            self.button.setText(label)
            self.button.setEnabled(True)
            self.button.setAccessibleName(f"{label} — {server['name']}" if label else "")
        self.button.setVisible(bool(action))

    def _on_button_clicked(self) -> None:
        if self._action:
            self.button.setEnabled(False)  # one request at a time; the next state enables it
            self.acted.emit(self.server, self._action)


class SignInColumn(QObject):
    """The table's sign-in column: a cell per remote server, kept across refreshes."""

    acted = Signal(str, str)  # the server's name, "sign_in" | "cancel" | "sign_out"
    # A sign-in this window started ended: the server's name, True if signed in, in words.
    sign_in_ended = Signal(str, bool, str)

    def __init__(self, table: QTableWidget, column: int) -> None:
        super().__init__(table)
        self._table = table
        self._column = column
        # The sign-ins this window started, and whether each was seen under way (a refresh
        # sent before the start may still answer with the state before it).
        self._following: dict[str, bool] = {}

    def follow(self, name: str) -> None:
        """Tell when the sign-in just started for `name` ends (`sign_in_ended`)."""
        self._following[name] = False

    def cell(self, row: int) -> SignInCell | None:
        found = self._table.cellWidget(row, self._column)
        return found if isinstance(found, SignInCell) else None

    def show(self, row: int, server: ToolServerJSON) -> None:
        """The row's cell for `server` (none for a server that does not sign in)."""
        cell = self.cell(row)
        status = sign_in_status(server)
        name = server["name"]
        if name in self._following:
            if status == "waiting_for_browser":
                self._following[name] = True
            elif status == "signed_in" or self._following[name]:  # ended (or given up)
                del self._following[name]
                if status in ("signed_in", "failed"):
                    self.sign_in_ended.emit(name, status == "signed_in", sign_in_words(server))
        if status is None:
            if cell is not None:
                self._table.removeCellWidget(row, self._column)
            return
        if cell is None or cell.server != server["name"]:
            cell = SignInCell(server["name"])
            cell.acted.connect(self.acted)
            self._table.setCellWidget(row, self._column, cell)
        words = cell.words.text()
        cell.show_server(server)
        if cell.words.text() != words:  # the column fits the new words (a widget's change
            self._table.resizeColumnToContents(self._column)  # does not resize it)
