"""The sidebar's projects, above its chats: a row per project (its name, how many chats it
holds), one of them open at a time. Opening a project shows its chats in the list below
(with their date groups); choosing the open one again closes it, and the list shows the
chats outside every project. Its context menu renames it, edits its instructions and
folders, shows its memory, deletes it (asking what becomes of its chats).

One open at a time rather than each project's chats nested under its row: the list below
keeps its date groups, its keyboard, its search and its small edits (conversation_rows.py),
and a project reads as a place the user enters, as in Claude Desktop's projects."""

from __future__ import annotations

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSignalBlocker,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QIcon,
    QKeyEvent,
    QPainter,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.chats.headers import header_font
from desktop.chats.rows import CHAT_MIME
from desktop.look.icons import icon
from desktop.look.palette import palette
from desktop.look.scale import SPACING
from desktop.look.theme import is_dark
from server.types.projects import ProjectJSON

ID_ROLE = Qt.ItemDataRole.UserRole
COUNT_ROLE = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex
MAX_SHOWN_ROWS = 8  # taller than this, the projects' list scrolls: the chats keep the room
KEYS = (Qt.Key.Key_F2, Qt.Key.Key_Delete, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)


def chats_said(count: int) -> str:
    return "1 chat" if count == 1 else f"{count} chats"


class _CountDelegate(QStyledItemDelegate):
    """A project's row: its name, and its count of chats muted at the row's end (the name
    ends in "…" before it; the row's highlight spans both)."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        super().initStyleOption(option, index)
        count = str(index.data(COUNT_ROLE) or "")
        room = option.fontMetrics.horizontalAdvance(count) + SPACING["l"] + 2 * SPACING["s"]
        width = max(0, option.rect.width() - option.decorationSize.width() - room)
        option.text = option.fontMetrics.elidedText(option.text, Qt.TextElideMode.ElideRight, width)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        super().paint(painter, option, index)
        count = str(index.data(COUNT_ROLE) or "")
        if count:
            painter.save()
            painter.setPen(QColor(palette(is_dark(option.palette)).muted))
            area = option.rect.adjusted(0, 0, -SPACING["m"], 0)
            align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(area, int(align), count)
            painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(1, super().sizeHint(option, index).height() + SPACING["s"])


class _ProjectRows(QListWidget):
    """The projects' rows; a chat dropped on one is moved into it."""

    chat_dropped = Signal(str, str)  # chat id, project id
    key_pressed = Signal(int)  # F2, Delete, Enter or Space on the current project

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.setDragDropMode(QListWidget.DragDropMode.DropOnly)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in KEYS and self.currentItem() is not None:
            self.key_pressed.emit(event.key())
            return
        super().keyPressEvent(event)

    def _target(self, event: QDragMoveEvent | QDropEvent) -> QListWidgetItem | None:
        if not event.mimeData().hasFormat(CHAT_MIME):
            return None
        return self.itemAt(event.position().toPoint())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasFormat(CHAT_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._target(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        item = self._target(event)
        if item is None:
            event.ignore()
            return
        chat_id = bytes(event.mimeData().data(CHAT_MIME).data()).decode()
        event.acceptProposedAction()
        self.chat_dropped.emit(chat_id, str(item.data(ID_ROLE)))


class ProjectsPanel(QWidget):
    opened = Signal(str)  # a project opened by the user ("": closed, the chats outside)
    new_requested = Signal()
    rename_requested = Signal(str)  # project id
    edit_requested = Signal(str)  # Instructions & folders…
    memory_requested = Signal(str)
    delete_requested = Signal(str)
    chat_dropped = Signal(str, str)  # a chat dragged onto a project: chat id, project id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projects")
        self.current: str | None = None  # the open project
        self.projects: list[ProjectJSON] = []
        self.title = QLabel("Projects", self)
        self.title.setObjectName("projects-title")
        self.title.setFont(header_font(self.font()))
        self.new_button = QToolButton(self)
        self.new_button.setObjectName("new-project")
        self.new_button.setToolTip("New project")
        self.new_button.setAccessibleName("New project")
        self.list = _ProjectRows(self)
        self.list.setObjectName("projects-list")
        self.list.setAccessibleName("Projects")
        self.list.setItemDelegate(_CountDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header = QHBoxLayout()
        header.setContentsMargins(SPACING["m"], SPACING["s"], SPACING["xs"], 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.list)
        self._icons()
        self.new_button.clicked.connect(self.new_requested)
        self.list.chat_dropped.connect(self.chat_dropped)
        self.list.key_pressed.connect(self._on_list_key_pressed)
        self.list.itemClicked.connect(self._on_list_item_chosen)
        self.list.customContextMenuRequested.connect(self._on_list_context_menu_requested)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._icons()
            self._paint_title()

    def _icons(self) -> None:
        self.new_button.setIcon(icon("new-chat", self.palette()))
        for index in range(self.list.count()):
            item = self.list.item(index)
            item.setIcon(self._row_icon(str(item.data(ID_ROLE))))

    def _paint_title(self) -> None:
        muted = palette(is_dark(self.palette())).muted
        self.title.setStyleSheet(f"color: {muted}; background: transparent;")

    def _row_icon(self, project_id: str) -> QIcon:
        # The open project's chevron points down at its chats below; the others' to the side.
        opened = project_id == self.current
        return icon("chevron-down" if opened else "chevron-right", self.palette())

    def name_of(self, project_id: str | None) -> str | None:
        return next((p["name"] for p in self.projects if p["id"] == project_id), None)

    def project(self, project_id: str | None) -> ProjectJSON | None:
        return next((p for p in self.projects if p["id"] == project_id), None)

    def show_projects(self, projects: list[ProjectJSON]) -> None:
        """The projects as the server lists them (by name); an open one that is gone closes
        (heard: the list below shows the chats outside)."""
        self.projects = list(projects)
        with QSignalBlocker(self.list):
            self.list.clear()
            for project in projects:
                item = QListWidgetItem(self._row_icon(project["id"]), project["name"])
                item.setData(ID_ROLE, project["id"])
                item.setData(COUNT_ROLE, str(project["chats"]))
                said = chats_said(project["chats"])
                item.setToolTip(f"{project['name']} — {said}")
                item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, said)
                self.list.addItem(item)
        self._paint_title()
        self._fit()
        if self.current is not None and self.project(self.current) is None:
            self.open_project(None)
            self.opened.emit("")
        else:
            self._select()

    def open_project(self, project_id: str | None) -> None:
        """Show `project_id` as the open one (None: none), not heard."""
        self.current = project_id
        self._icons()
        self._select()

    def _select(self) -> None:
        with QSignalBlocker(self.list):
            self.list.clearSelection()
            for index in range(self.list.count()):
                item = self.list.item(index)
                if item.data(ID_ROLE) == self.current:
                    self.list.setCurrentItem(item)

    def _fit(self) -> None:
        """As tall as its rows, up to MAX_SHOWN_ROWS; hidden while there is none."""
        rows = self.list.count()
        self.list.setVisible(rows > 0)
        height = self.list.sizeHintForRow(0) if rows else 0
        frame = 2 * self.list.frameWidth()
        self.list.setFixedHeight(min(rows, MAX_SHOWN_ROWS) * height + frame)

    def _on_list_item_chosen(self, item: QListWidgetItem) -> None:
        project_id = str(item.data(ID_ROLE))
        chosen = None if project_id == self.current else project_id  # the open one: closed
        self.open_project(chosen)
        self.opened.emit(chosen or "")

    def _on_list_key_pressed(self, key: int) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        if key == Qt.Key.Key_F2:
            self.rename_requested.emit(str(item.data(ID_ROLE)))
        elif key == Qt.Key.Key_Delete:
            self.delete_requested.emit(str(item.data(ID_ROLE)))
        else:  # (a click alone: where one click also activates, it would open and close it)
            self._on_list_item_chosen(item)

    def _on_list_context_menu_requested(self, position: QPoint) -> None:
        # From the keyboard (the menu key), the menu is the current project's.
        item = self.list.itemAt(position) or self.list.currentItem()
        if item is None:
            return
        project_id = str(item.data(ID_ROLE))  # by id: the list may change while it is open
        menu = QMenu(self)
        menu.setObjectName("project-menu")
        menu.addAction("Rename…", lambda: self.rename_requested.emit(project_id))
        menu.addAction("Instructions && folders…", lambda: self.edit_requested.emit(project_id))
        menu.addAction("Memory…", lambda: self.memory_requested.emit(project_id))
        menu.addSeparator()
        menu.addAction("Delete…", lambda: self.delete_requested.emit(project_id))
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(self.list.viewport().mapToGlobal(position))  # never exec() under qasync
