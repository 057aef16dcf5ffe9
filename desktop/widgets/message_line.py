"""A dialog's one line of news from the server: what was done, or what went wrong."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QLabel, QWidget


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
