"""The sidebar: conversations newest first, a search box, inline rename, delete, New chat.

Rename (F2 or the context menu) edits the title in place; Delete (the key or the context
menu) asks first, without a nested event loop.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QPoint, QRect, QSignalBlocker, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAccessible,
    QColor,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPixmap,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyle,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop import style
from desktop.widgets.conversation_rows import (
    HIT_ROLE,
    ID_ROLE,
    TITLE_ROLE,
    UNTITLED,
    Row,
    ShownRows,
    row_of,
)
from desktop.widgets.search_result import OneLineDelegate, SearchResultDelegate
from server.types import ConversationJSON

SEARCH_DELAY_MS = 200
BUSY_TIP = "Replying…"
DOT_PX = 12  # the busy dot's box, kept free on every row


class _List(QListWidget):
    """The rows. A chat whose reply is in flight gets a dot, drawn over its row rather than
    set as its icon: any change to an item lays out and repaints every row (issue 16)."""

    delete_pressed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows = ShownRows(self, _blank_icon())
        self.busy: set[str] = set()
        self._described: set[str] = set()  # the rows told "Replying…" for a screen reader
        self.setIconSize(QSize(DOT_PX, DOT_PX))
        # Flat, as the transcript's: Fusion's repaints its gradients with every row moved.
        self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            self.delete_pressed.emit()
            return
        super().keyPressEvent(event)

    def set_busy(self, conversation_ids: set[str]) -> None:
        changed = self.busy ^ conversation_ids
        self.busy = set(conversation_ids)
        for conversation_id in changed:
            item = self.rows.item(conversation_id)
            if item is not None:
                self.viewport().update(self.visualItemRect(item))
        self.describe_busy()

    def describe_busy(self) -> None:
        """ "Replying…" in the busy rows' descriptions for a screen reader, and in no other
        row; only while one is active: writing it is an item edit, which lays every row out."""
        if not QAccessible.isActive():
            return
        role = Qt.ItemDataRole.AccessibleDescriptionRole
        with QSignalBlocker(self):
            for conversation_id in self.busy | self._described:
                item = self.rows.item(conversation_id)
                wanted = BUSY_TIP if conversation_id in self.busy else ""
                if item is not None and (item.data(role) or "") != wanted:
                    item.setData(role, wanted)
        self._described = set(self.busy)

    def dot_rect(self, item: QListWidgetItem) -> QRect:
        """Where a row's dot is drawn: its icon's place."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.visualItemRect(item)
        option.features |= (
            QStyleOptionViewItem.ViewItemFeature.HasDecoration
            | QStyleOptionViewItem.ViewItemFeature.HasDisplay
        )
        option.decorationSize = self.iconSize()
        option.icon = item.icon()
        option.text = item.text()
        return self.style().subElementRect(
            QStyle.SubElement.SE_ItemViewItemDecoration, option, self
        )

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.busy:
            return
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        for conversation_id in self.busy:
            item = self.rows.item(conversation_id)
            if item is not None and self.visualItemRect(item).intersects(event.rect()):
                # On a selected row, the highlight is its background: the dot takes its text's.
                on_highlight = item.isSelected()
                roles = (QPalette.ColorRole.Highlight, QPalette.ColorRole.HighlightedText)
                painter.setBrush(self.palette().color(roles[on_highlight]))
                box = self.dot_rect(item)
                side = min(box.width(), box.height()) - 4
                painter.drawEllipse(
                    box.center().x() - side // 2, box.center().y() - side // 2, side, side
                )
        painter.end()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            item = self.itemAt(event.pos())
            if item is not None and item.data(ID_ROLE) in self.busy:
                tip = f"{item.data(TITLE_ROLE)} — {BUSY_TIP}"
                QToolTip.showText(event.globalPos(), tip, self.viewport())
                return True
        return super().viewportEvent(event)


def _blank_icon() -> QIcon:
    pixmap = QPixmap(DOT_PX, DOT_PX)
    pixmap.fill(QColor(0, 0, 0, 0))
    return QIcon(pixmap)


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
        # One line a title (the whole of it in its tooltip), the same height every row: a
        # change lays the rows out without measuring each (issue 16). A search's rows are two
        # lines where a message matched, measured by their delegate.
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._plain_delegate = OneLineDelegate(self.list)
        self.list.setItemDelegate(self._plain_delegate)
        self._search_delegate = SearchResultDelegate(self.list)
        self._held: tuple[list[ConversationJSON], str | None, bool] | None = None
        for delegate in (self._plain_delegate, self._search_delegate):
            delegate.closeEditor.connect(self._on_delegate_close_editor)
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
        """No conversation selected (a new chat), without announcing a selection. A title
        being edited in place is committed first, heard: a rename (none is selected by it)."""
        if self.list.state() == QAbstractItemView.State.EditingState:
            self.list.setCurrentRow(-1)
        with QSignalBlocker(self.list):
            self.list.clearSelection()
            self.list.setCurrentRow(-1)

    def title_of(self, conversation_id: str | None) -> str | None:
        """The title the list shows for a conversation, if it is listed."""
        item = self._item(conversation_id)
        return None if item is None else str(item.data(TITLE_ROLE))

    def set_busy(self, conversation_ids: set[str]) -> None:
        """Mark the chats whose reply is in flight (a dot, and "Replying…" when hovered)."""
        self.list.set_busy(conversation_ids)

    def busy_shown(self) -> set[str]:
        """The chats marked as replying."""
        return set(self.list.busy)

    def _item(self, conversation_id: str | None) -> QListWidgetItem | None:
        return self.list.rows.item(conversation_id)

    def searching(self) -> bool:
        """Whether the rows are a search's results (with snippets)."""
        return self.list.itemDelegate() is self._search_delegate

    def edited_in_place(self) -> bool:
        """A title was edited in place, and the rows do not know what it is stored as."""
        return self.list.rows.edited()

    def show_conversations(
        self, conversations: list[ConversationJSON], current: str | None, top: bool = False
    ) -> None:
        """Show the list; `top`: only its first rows came, the others stay as they are. While
        a title is being edited in place, held until the editor closes: moving or rewriting
        rows under it would end the edit or overwrite the typing."""
        if self.list.state() == QAbstractItemView.State.EditingState:
            self._held = (conversations, current, top)
            return
        self._held = None
        rows = [row_of(conversation) for conversation in conversations]
        searching = any(row.snippet for row in rows)
        if top:
            rows = self.list.rows.with_top(rows)
        with QSignalBlocker(self.list):
            if searching != self.searching():
                self.list.setUniformItemSizes(not searching)
                self.list.setItemDelegate(
                    self._search_delegate if searching else self._plain_delegate
                )
            self._show_rows(rows, current)
        query = self.query()
        self.no_results.setText(f"No chats match “{query}”." if query else "")
        self.no_results.setVisible(bool(query) and not conversations)

    def put_on_top(self, chats: list[tuple[str, str]], current: str | None) -> bool:
        """Chats that began a reply, (id, title), the latest first: moved, or added, to the
        top, as the server now lists them, with no request for the list (the rows below kept
        as they are). False, and nothing done, while a title is edited in place."""
        if self.list.state() == QAbstractItemView.State.EditingState:
            return False
        top = [Row(conversation_id, title or UNTITLED) for conversation_id, title in chats]
        with QSignalBlocker(self.list):
            self._show_rows(self.list.rows.with_top(top), current)
        return True

    def _show_rows(self, rows: list[Row], current: str | None) -> None:
        """`rows`, with `current` selected (the list's signals blocked)."""
        self.list.rows.show(rows)
        self.list.describe_busy()
        item = self._item(current)
        if item is None:
            self.list.clearSelection()
            self.list.setCurrentRow(-1)
        elif self.list.currentItem() is not item:
            self.list.setCurrentItem(item)

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

    def _on_delegate_close_editor(self) -> None:
        # After Qt has committed the edit and left the editing state.
        QTimer.singleShot(0, self._show_held)

    def _show_held(self) -> None:
        if self._held is not None:
            self.show_conversations(*self._held)

    def _on_search_text_changed(self, _text: str) -> None:
        self._search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        self.search_changed.emit(self.query())

    def _on_list_current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.conversation_selected.emit(str(current.data(ID_ROLE)))

    def _on_list_item_changed(self, item: QListWidgetItem) -> None:
        conversation_id = str(item.data(ID_ROLE))
        title = item.text().strip()
        stored = str(item.data(TITLE_ROLE))
        if title and title != stored:
            self.list.rows.forget(conversation_id)  # as typed, until a list says what is stored
            self._held = None  # a list older than the rename: the one after it follows
            self.rename_requested.emit(conversation_id, title)
        elif item.text() != stored:  # a blank title is none: the stored one again
            with QSignalBlocker(self.list):
                item.setText(stored)
