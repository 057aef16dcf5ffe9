"""The sidebar: conversations newest first, a search box, inline rename, delete, New chat."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

ID_ROLE = Qt.ItemDataRole.UserRole
SEARCH_DELAY_MS = 200


class _List(QListWidget):
    delete_pressed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            self.delete_pressed.emit()
            return
        super().keyPressEvent(event)


class ConversationList(QWidget):
    conversation_selected = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_confirmed = Signal(str)
    search_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.new_button = QPushButton("New chat", self)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.list = _List(self)
        self.list.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.new_button.clicked.connect(self.new_requested)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.list.itemChanged.connect(self._on_list_item_changed)
        self.list.delete_pressed.connect(self.ask_delete_current)
        self._dialog: QMessageBox | None = None

    def show_conversations(self, conversations: list[dict[str, Any]], current: str | None) -> None:
        blocker = QSignalBlocker(self.list)
        self.list.clear()
        for conversation in conversations:
            title = conversation["title"] or "New chat"
            match = conversation.get("match")
            label = f"{title}\n{match['snippet']}" if match and match.get("message_id") else title
            item = QListWidgetItem(label)
            item.setData(ID_ROLE, conversation["id"])
            item.setData(Qt.ItemDataRole.ToolTipRole, title)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if conversation["id"] == current:
                self.list.setCurrentItem(item)
        del blocker

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else str(item.data(ID_ROLE))

    def start_rename(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            with QSignalBlocker(self.list):
                item.setText(str(item.data(Qt.ItemDataRole.ToolTipRole)))
            self.list.editItem(item)

    def ask_delete_current(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        conversation_id = str(item.data(ID_ROLE))
        dialog = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete conversation",
            f"Delete “{item.data(Qt.ItemDataRole.ToolTipRole)}”? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        dialog.setObjectName("confirm-delete")

        def finished(result: int) -> None:
            if result == QMessageBox.StandardButton.Yes:
                self.delete_confirmed.emit(conversation_id)
            dialog.deleteLater()
            self._dialog = None

        dialog.finished.connect(finished)
        self._dialog = dialog
        dialog.open()  # never a nested event loop (exec) under qasync

    def _on_search_text_changed(self, _text: str) -> None:
        self._search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        self.search_changed.emit(self.search.text().strip())

    def _on_list_current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.conversation_selected.emit(str(current.data(ID_ROLE)))

    def _on_list_item_changed(self, item: QListWidgetItem) -> None:
        title = item.text().strip()
        if title and title != item.data(Qt.ItemDataRole.ToolTipRole):
            self.rename_requested.emit(str(item.data(ID_ROLE)), title)
