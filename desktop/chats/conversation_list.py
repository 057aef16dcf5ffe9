"""The sidebar: conversations newest first, a search box, inline rename, delete, New chat;
the projects above the chats (projects_panel.py), what the list shows said over it
(scope_bar.py), a chat moved to another project from its context menu.

Rename (F2 or the context menu) edits the title in place; Delete (the key or the context
menu) asks first, without a nested event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QEvent, QPoint, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.chats.conversation_rows import (
    HIT_ROLE,
    ID_ROLE,
    TITLE_ROLE,
    UNTITLED,
    Row,
    row_of,
)
from desktop.chats.groups import local_now
from desktop.chats.headers import HeadedOneLine, HeadedSearchResult
from desktop.chats.projects_panel import ProjectsPanel
from desktop.chats.rows import ChatRows
from desktop.chats.scope_bar import ScopeBar
from desktop.look.icons import icon
from desktop.look.scale import SPACING
from server.types import ConversationJSON

SEARCH_DELAY_MS = 200
LAYOUT_BATCH = 100  # rows laid out in one pass of the window's loop


class ConversationList(QWidget):
    conversation_selected = Signal(str)
    hit_chosen = Signal(str)  # a search's row clicked or activated (the chat open too)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_confirmed = Signal(str)
    search_changed = Signal(str)
    move_requested = Signal(str, str)  # chat id, project id ("": out of every project)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)  # its style sheet's colour
        self.new_button = QPushButton("New chat", self)
        self.new_button.setObjectName("new-chat")
        self.new_button.setIcon(icon("new-chat", self.palette()))
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search conversations")
        self.projects = ProjectsPanel(self)
        self.scope = ScopeBar(self)
        self.project_of: dict[str, str | None] = {}  # each chat listed: its project
        self.list = ChatRows(self)
        self.list.setAccessibleName("Conversations")
        # The chats in date groups (desktop/chats/groups.py) as they are on this clock.
        self.clock: Callable[[], datetime] = local_now
        # One line a title (the whole of it in its tooltip); the first row of a date group
        # is taller by its header. A search's rows are two lines where a message matched.
        # Rows of two heights are measured one by one at each layout: laid out in batches,
        # one pass of the window's loop at a time (a chat moved to the top of 1,000: 11 ms
        # in one pass, 2 ms a pass in batches of 100, as the rows of one height were).
        self.list.setLayoutMode(QListView.LayoutMode.Batched)
        self.list.setBatchSize(LAYOUT_BATCH)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._plain_delegate = HeadedOneLine(self.list, self.list.header_at)
        self.list.setItemDelegate(self._plain_delegate)
        self._search_delegate = HeadedSearchResult(self.list, self.list.header_at)
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
        within = QHBoxLayout()  # (under the search it limits, lined up with the titles)
        within.setContentsMargins(SPACING["m"], SPACING["xs"], 0, 0)
        within.addWidget(self.scope.within)
        layout.addLayout(within)
        layout.addWidget(self.projects)
        layout.addWidget(self.scope)
        layout.addWidget(self.no_results)
        layout.addWidget(self.list, 1)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.new_button.clicked.connect(self.new_requested)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.list.currentItemChanged.connect(self._on_list_current_changed)
        self.list.itemClicked.connect(self._on_list_item_chosen)
        self.list.itemActivated.connect(self._on_list_item_chosen)
        self.list.itemChanged.connect(self._on_list_item_changed)
        self.list.delete_pressed.connect(self.ask_delete)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._on_list_context_menu_requested)
        self._dialog: QMessageBox | None = None

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.new_button.setIcon(icon("new-chat", self.palette()))

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

    def set_waiting(self, conversation_ids: set[str]) -> None:
        """Mark the chats whose reply waits for the user (their own badge, not the dot)."""
        self.list.set_waiting(conversation_ids)

    def waiting_shown(self) -> set[str]:
        """The chats marked as waiting for the user."""
        return set(self.list.waiting)

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
        for conversation in conversations:
            self.project_of[conversation["id"]] = conversation.get("project_id")
        rows = [row_of(conversation) for conversation in conversations]
        searching = any(row.snippet for row in rows)
        if top:
            rows = self.list.rows.with_top(rows)
        with QSignalBlocker(self.list):
            if searching != self.searching():
                self.list.setItemDelegate(
                    self._search_delegate if searching else self._plain_delegate
                )
            self._show_rows(rows, current)
        query = self.query()
        project = self.projects.name_of(self.projects.current)
        if query:
            self.no_results.setText(f"No chats match “{query}”.")
        else:  # an open project with none yet: where a new chat goes
            self.no_results.setText(f"No chats in “{project}” yet: a new chat starts here.")
        self.no_results.setVisible((bool(query) or project is not None) and not conversations)

    def put_on_top(self, chats: list[tuple[str, str]], current: str | None) -> bool:
        """Chats that began a reply, (id, title), the latest first: moved, or added, to the
        top, as the server now lists them, with no request for the list (the rows below kept
        as they are). False, and nothing done, while a title is edited in place."""
        if self.list.state() == QAbstractItemView.State.EditingState:
            return False
        now = self.clock()  # their last activity: now, as the server has it too
        top = [Row(chat_id, title or UNTITLED, at=now.timestamp()) for chat_id, title in chats]
        with QSignalBlocker(self.list):
            self._show_rows(self.list.rows.with_top(top), current)
        return True

    def _show_rows(self, rows: list[Row], current: str | None) -> None:
        """`rows`, with `current` selected (the list's signals blocked)."""
        self.list.show_rows(rows, self.clock())
        self.list.describe_busy()
        if rows:
            self.no_results.hide()  # (a chat put on top: no list came to say so)
        item = self._item(current)
        if item is None:
            self.list.clearSelection()
            self.list.setCurrentRow(-1)
        elif self.list.currentItem() is not item:
            self.list.setCurrentItem(item)

    def regroup(self) -> None:
        """The date groups drawn again as they are now (a day has begun)."""
        self.list.show_rows(list(self.list.rows.rows), self.clock())

    def select_neighbour(self, step: int) -> None:
        """Open the chat `step` rows below the selected one (above if negative), as a
        click on it does; from a new chat, the first (or the last)."""
        count = self.list.count()
        if not count:
            return
        row = self.list.currentRow()
        first = 0 if step > 0 else count - 1
        row = first if row < 0 else max(0, min(count - 1, row + step))
        self.list.setCurrentRow(row)
        self.list.scrollToItem(self.list.item(row))

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

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
        self._add_move_menu(menu, conversation_id)
        menu.addAction("Delete…", lambda: self._act_on(conversation_id, self.ask_delete))
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(self.list.viewport().mapToGlobal(position))  # never exec() under qasync

    def _add_move_menu(self, menu: QMenu, conversation_id: str) -> None:
        """ "Move to project ▸": every project, and out of every project; where it is, ticked."""
        moves = menu.addMenu("Move to project")
        moves.setObjectName("move-to-project")
        here = self.project_of.get(conversation_id)
        targets = [(None, "No project")] + [(p["id"], p["name"]) for p in self.projects.projects]
        for project_id, name in targets:
            action = moves.addAction(name.replace("&", "&&"))
            action.setCheckable(True)
            action.setChecked(project_id == here)  # (moved there again: nothing changes)
            action.setData(project_id or "")
            action.triggered.connect(
                lambda _=False, to=project_id or "": self.move_requested.emit(conversation_id, to)
            )

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

    def _on_search_text_changed(self, text: str) -> None:
        self.scope.show_searching(bool(text.strip()))
        self._search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        self.search_changed.emit(self.query())

    def _on_list_current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.conversation_selected.emit(str(current.data(ID_ROLE)))

    def _on_list_item_chosen(self, item: QListWidgetItem) -> None:
        # Clicking the chat already open changes no selection: a search's hit in it is
        # still wanted (shown at the words found).
        if self.query():
            self.hit_chosen.emit(str(item.data(ID_ROLE)))

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
