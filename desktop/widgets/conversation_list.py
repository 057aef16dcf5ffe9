"""The sidebar: conversations newest first, a search box, inline rename, delete, New chat.

Rename (F2 or the context menu) edits the title in place; Delete (the key or the context
menu) asks first, without a nested event loop.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.search_result import SNIPPET_ROLE, SearchResultDelegate, clean_snippet
from server.types import ConversationJSON

ID_ROLE = Qt.ItemDataRole.UserRole
BUSY_ROLE = Qt.ItemDataRole.UserRole + 1
TITLE_ROLE = Qt.ItemDataRole.UserRole + 2
HIT_ROLE = Qt.ItemDataRole.UserRole + 4  # a search hit's message id
SEARCH_DELAY_MS = 200
BUSY_TIP = "Replying…"


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
        self.search.setAccessibleName("Search conversations")
        self.list = _List(self)
        self.list.setAccessibleName("Conversations")
        self.list.setWordWrap(True)
        self.list.setItemDelegate(SearchResultDelegate(self.list))
        self.no_results = QLabel(self)
        self.no_results.setObjectName("no-results")
        self.no_results.setWordWrap(True)
        self.no_results.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.no_results)
        layout.addWidget(self.list, 1)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.new_button.clicked.connect(self.new_requested)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.list.itemChanged.connect(self._on_list_item_changed)
        self.list.delete_pressed.connect(self.ask_delete)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._on_list_context_menu_requested)
        self._dialog: QMessageBox | None = None

    def query(self) -> str:
        """What the search box asks for (empty: every conversation)."""
        return self.search.text().strip()

    def clear_selection(self) -> None:
        """No conversation selected (a new chat), without announcing a selection."""
        with QSignalBlocker(self.list):
            self.list.clearSelection()
            self.list.setCurrentRow(-1)

    def title_of(self, conversation_id: str | None) -> str | None:
        """The title the list shows for a conversation, if it is listed."""
        item = self._item(conversation_id)
        return None if item is None else str(item.data(TITLE_ROLE))

    def set_busy(self, conversation_ids: set[str]) -> None:
        """Mark the chats whose reply is in flight (a dot, and "Replying…" when hovered)."""
        with QSignalBlocker(self.list):
            for row in range(self.list.count()):
                item = self.list.item(row)
                busy = item.data(ID_ROLE) in conversation_ids
                if bool(item.data(BUSY_ROLE)) != busy:
                    item.setData(BUSY_ROLE, busy)
                    item.setIcon(self._busy_icon() if busy else QIcon())
                    title = str(item.data(TITLE_ROLE))
                    item.setStatusTip(BUSY_TIP if busy else "")
                    item.setData(
                        Qt.ItemDataRole.AccessibleDescriptionRole, BUSY_TIP if busy else ""
                    )
                    item.setToolTip(f"{title} — {BUSY_TIP}" if busy else title)

    def _busy_icon(self) -> QIcon:
        size = 12
        pixmap = QPixmap(size, size)
        pixmap.fill(QColor(0, 0, 0, 0))
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.palette().color(QPalette.ColorRole.Highlight))
        painter.drawEllipse(2, 2, size - 4, size - 4)
        painter.end()
        return QIcon(pixmap)

    def _item(self, conversation_id: str | None) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(ID_ROLE) == conversation_id:
                return item
        return None

    def show_conversations(
        self, conversations: list[ConversationJSON], current: str | None
    ) -> None:
        blocker = QSignalBlocker(self.list)
        self.list.clear()
        for conversation in conversations:
            title = conversation["title"] or "New chat"
            match = conversation.get("match")
            item = QListWidgetItem(title)
            if match and match["message_id"]:
                item.setData(SNIPPET_ROLE, clean_snippet(match["snippet"]))
                item.setData(HIT_ROLE, match["message_id"])
            item.setData(ID_ROLE, conversation["id"])
            item.setData(TITLE_ROLE, title)
            item.setToolTip(title)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if conversation["id"] == current:
                self.list.setCurrentItem(item)
        del blocker
        query = self.query()
        self.no_results.setText(f"No chats match “{query}”." if query else "")
        self.no_results.setVisible(bool(query) and not conversations)

    def start_rename(self, item: QListWidgetItem | None = None) -> None:
        """Edit the title of `item` (the selected chat by default) in place."""
        item = item or self.list.currentItem()
        if item is not None:
            with QSignalBlocker(self.list):
                item.setText(str(item.data(TITLE_ROLE)))
            self.list.editItem(item)

    def ask_delete(self, item: QListWidgetItem | None = None) -> None:
        """Ask whether to delete `item` (the selected chat by default), without a nested
        event loop; `delete_confirmed` says yes."""
        item = item or self.list.currentItem()
        if item is None:
            return
        conversation_id = str(item.data(ID_ROLE))
        dialog = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete conversation",
            f"Delete “{item.data(TITLE_ROLE)}”? This cannot be undone.",
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

    def _on_list_context_menu_requested(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        # Acts on the chat clicked, without opening it (the one on screen stays). By id: the
        # list may be refreshed while the menu is open.
        conversation_id = str(item.data(ID_ROLE))
        menu = QMenu(self)
        menu.setObjectName("conversation-menu")
        menu.addAction("Rename", lambda: self._act_on(conversation_id, self.start_rename))
        menu.addAction("Delete…", lambda: self._act_on(conversation_id, self.ask_delete))
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(self.list.viewport().mapToGlobal(position))  # never exec() under qasync

    def _act_on(
        self, conversation_id: str, action: Callable[[QListWidgetItem | None], None]
    ) -> None:
        item = self._item(conversation_id)
        if item is not None:
            action(item)

    def hit(self, conversation_id: str) -> str | None:
        """The message a search found in this chat (None: no search, or its title matched)."""
        item = self._item(conversation_id)
        found = item.data(HIT_ROLE) if item is not None else None
        return str(found) if found else None

    def _on_search_text_changed(self, _text: str) -> None:
        self._search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        self.search_changed.emit(self.query())

    def _on_list_current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.conversation_selected.emit(str(current.data(ID_ROLE)))

    def _on_list_item_changed(self, item: QListWidgetItem) -> None:
        title = item.text().strip()
        if title and title != item.data(TITLE_ROLE):
            self.rename_requested.emit(str(item.data(ID_ROLE)), title)
