"""The sign-in of each remote MCP server, on its row of the servers' table: its state in
words and the one thing to do about it — Sign in, Cancel (while the browser has the page),
Sign out. The words are the row's own item (drawn as the row is, selected or not, and read
by a screen reader with the row); the cell's widget holds the button, to their right. The
cells are kept across refreshes (the table is shown again every second), so a button the
keyboard is on stays where it is, and one pressed stays off until its request is answered."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QHBoxLayout, QPushButton, QTableWidget, QWidget

from desktop.tools.sign_in import sign_in_status, sign_in_words
from server.types.tools import ToolServerJSON

ACTIONS = {
    "needs_sign_in": ("sign_in", "Sign in"),
    "failed": ("sign_in", "Sign in"),
    "waiting_for_browser": ("cancel", "Cancel"),
    "signed_in": ("sign_out", "Sign out"),
}
GAP_PX = 12  # between the words and the button


def row_words(server: ToolServerJSON) -> str:
    """The words on the row: a failure's reason is in the message line, the details and the
    tooltip, not in a table cell."""
    return "Sign-in failed" if sign_in_status(server) == "failed" else sign_in_words(server)


class SignInCell(QWidget):
    acted = Signal(str, str)  # the server's name, "sign_in" | "cancel" | "sign_out"

    def __init__(self, server: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server = server
        self.button = QPushButton(self)
        # The row's own background and words show through (its selection too).
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(4, 0, 4, 0)
        self._layout.addStretch(1)
        self._layout.addWidget(self.button)
        self._action = ""
        self.busy = False  # its request is under way
        self.button.clicked.connect(self._on_button_clicked)

    def show_server(self, server: ToolServerJSON, words_px: int) -> None:
        """`words_px`: the width of the row's words, left clear for them."""
        self._layout.setContentsMargins(words_px + GAP_PX, 0, 4, 0)
        action, label = ACTIONS.get(sign_in_status(server) or "", ("", ""))
        if action != self._action:
            self._action = action
            self.button.setText(label)
            self.button.setAccessibleName(f"{label} — {server['name']}" if label else "")
        self.button.setEnabled(not self.busy)
        self.button.setVisible(bool(action))

    def settle(self) -> None:
        """Its request was answered (done or refused): the button works again."""
        self.busy = False
        self.button.setEnabled(True)

    def _on_button_clicked(self) -> None:
        if self._action and not self.busy:
            self.busy = True
            self.button.setEnabled(False)  # one request at a time
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
        # The keyboard moves through the table's cells (Tab, arrows): landing on a sign-in
        # cell puts the focus on its button, which Space presses.
        table.currentCellChanged.connect(self._on_table_current_cell_changed)

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
            cell.button.installEventFilter(self)
            self._table.setCellWidget(row, self._column, cell)
        before = cell.sizeHint().width()
        words = self._table.fontMetrics().horizontalAdvance(row_words(server))
        cell.show_server(server, words)
        if cell.sizeHint().width() != before:  # a widget's change does not resize its column
            self._table.resizeColumnToContents(self._column)

    def _on_table_current_cell_changed(self, row: int, column: int, *_previous: int) -> None:
        cell = self.cell(row) if column == self._column else None
        if cell is not None and self._table.hasFocus() and cell.button.isVisible():
            cell.button.setFocus(Qt.FocusReason.TabFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Tab on a cell's button goes on through the table's cells, as from any cell (a
        widget in a cell is outside the table's own Tab order)."""
        tab = (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
        if (
            isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in tab
        ):
            self._table.setFocus(Qt.FocusReason.TabFocusReason)
            QApplication.sendEvent(self._table, event)
            return True
        return super().eventFilter(watched, event)

    def settle(self, name: str) -> None:
        """The request a cell's button made for `name` was answered."""
        for row in range(self._table.rowCount()):
            cell = self.cell(row)
            if cell is not None and cell.server == name:
                cell.settle()
