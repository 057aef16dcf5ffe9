"""What the dialogs that show the server's things (Models, MCP servers, Library) share: a
line of news from the server, and a table of rows to pick one from."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QTableWidget,
    QWidget,
)


def rows_table(columns: tuple[str, ...], name: str, parent: QWidget) -> QTableWidget:
    """A read-only table whose rows are picked one at a time, columns fitted to contents."""
    table = QTableWidget(0, len(columns), parent)
    table.setHorizontalHeaderLabels(columns)
    table.setAccessibleName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


class MessageLine(QLabel):
    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setObjectName(name)

    def show_error(self, text: str) -> None:
        self.setStyleSheet("color: #c0392b;")
        self.setText(text)

    def show_note(self, text: str) -> None:
        self.setStyleSheet("")
        self.setText(text)


class ServerDialog(QDialog):
    """A dialog that shows what the server has, with a MessageLine for the server's news."""

    message: MessageLine

    def show_error(self, text: str) -> None:
        self.message.show_error(text)

    def show_note(self, text: str) -> None:
        self.message.show_note(text)
