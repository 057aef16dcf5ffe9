"""A message for the user above the conversation (an error, a note), until dismissed."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget


class Banner(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setStyleSheet("color: #c0392b; padding: 4px;")
        self.dismiss_button = QPushButton("Dismiss", self)
        self.dismiss_button.setAccessibleName("Dismiss the message")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button)
        self.dismiss_button.clicked.connect(self.hide)
        self.hide()

    def text(self) -> str:
        return self.label.text()

    def show_message(self, message: str) -> None:
        self.label.setText(message)
        self.show()

    def withdraw(self, message: str) -> None:
        """Hide the banner if it still says `message` (no longer true), not another one."""
        if self.isVisible() and self.text() == message:
            self.hide()
