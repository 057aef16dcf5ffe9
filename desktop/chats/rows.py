"""The sidebar's rows: a chat whose reply is in flight gets a dot (and "Replying…" for a
screen reader and as its tooltip); one whose reply waits for the user (a tool call to approve,
a long call to keep or stop) gets its own badge instead, an amber dot and
"Waiting for you" at the row's end; Delete asks the sidebar to delete the selected chat. A
row dragged carries its chat's id (CHAT_MIME), which a project's row takes as a move."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import (
    QEvent,
    QMimeData,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSignalBlocker,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAccessible,
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPixmap,
)
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from desktop.chats.conversation_rows import ID_ROLE, TITLE_ROLE, Row, ShownRows
from desktop.chats.headers import chat_part
from desktop.look import style

CHAT_MIME = "application/x-parley-chat"  # a dragged row: its chat's id, UTF-8
BUSY_TIP = "Replying…"
WAITING_TIP = "Waiting for you"
# The waiting badge's words, the longest that leaves the title this share of the row.
WAITING_WORDS = (WAITING_TIP, "Waiting")
TITLE_SHARE = 0.4
# Amber with near-black words: apart from the busy dot's highlight, readable in both themes.
WAITING_FILL = QColor("#f2b01e")
WAITING_TEXT = QColor("#1c1c1c")
DOT_PX = 12  # the busy dot's box, kept free on every row
BADGE_GAP = 6  # between a title's "…" and the waiting badge


class ChatRows(QListWidget):
    """The rows. A chat whose reply is in flight gets a dot, and one waiting for the user its
    badge, drawn over its row rather than set as its icon or text: any change to an item lays
    out and repaints every row."""

    delete_pressed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows = ShownRows(self, _blank_icon())
        self.busy: set[str] = set()
        self.waiting: set[str] = set()  # busy chats whose reply waits for the user
        self._described: set[str] = set()  # the rows told what they are for a screen reader
        self._named: set[str] = set()  # the rows named with their group's header for one
        self.setIconSize(QSize(DOT_PX, DOT_PX))
        self.setDragEnabled(True)  # onto a project: moved there
        self.setDragDropMode(QListWidget.DragDropMode.DragOnly)
        # Flat, as the transcript's: Fusion's repaints its gradients with every row moved.
        self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.verticalScrollBar().setStyleSheet(style.scroll_bar_in(self.palette()))

    def show_rows(self, rows: list[Row], now: datetime) -> None:
        """Show `rows` in their date groups as they are at `now` (the list's signals blocked)."""
        if self.rows.show(rows, now):
            self.scheduleDelayedItemsLayout()  # the rows with a header are taller
            self.viewport().update()
        self._name_groups()

    def _name_groups(self) -> None:
        """A group's first chat is named with its header for a screen reader ("Today: Plan
        the garden"): a list widget's rows can only be list items, so the header is heard
        as the start of its first row. Only while a screen reader is active: writing it is
        an item edit, which lays every row out."""
        if not QAccessible.isActive():
            return
        role = Qt.ItemDataRole.AccessibleTextRole
        named: set[str] = set()
        with QSignalBlocker(self):
            for index, row in enumerate(self.rows.rows):
                header = self.rows.header_at(index)
                wanted = f"{header}: {row.title}" if header else None
                if header:
                    named.add(row.id)
                elif row.id not in self._named:
                    continue
                item = self.item(index)
                if item is not None and item.data(role) != wanted:
                    item.setData(role, wanted)
        self._named = named

    def mimeData(self, items: list[QListWidgetItem]) -> QMimeData:  # type: ignore[override]
        data = QMimeData()
        if items:
            data.setData(CHAT_MIME, str(items[0].data(ID_ROLE)).encode())
        return data

    def mimeTypes(self) -> list[str]:
        return [CHAT_MIME]

    def header_at(self, row: int) -> str:
        """The date header drawn above the row at `row` ("" for none)."""
        return self.rows.header_at(row)

    def chat_rect(self, item: QListWidgetItem) -> QRect:
        """Where a row's chat is drawn: its row, less the header above it if it has one."""
        row = self.row(item)
        return chat_part(self.visualItemRect(item), self.header_at(row), self.font(), row == 0)

    def _on_header(self, position: QPoint) -> bool:
        item = self.itemAt(position)
        return item is not None and not self.chat_rect(item).contains(position)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self._on_header(event.position().toPoint()):
            event.accept()  # a header is no chat: clicking it chooses nothing
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._on_header(event.position().toPoint()):
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if self._on_header(event.position().toPoint()):
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Delete:
            self.delete_pressed.emit()
            return
        super().keyPressEvent(event)

    def set_busy(self, conversation_ids: set[str]) -> None:
        changed = self.busy ^ conversation_ids
        self.busy = set(conversation_ids)
        self._repaint(changed)

    def set_waiting(self, conversation_ids: set[str]) -> None:
        """The chats whose reply waits for the user: their badge, not the busy dot."""
        changed = self.waiting ^ conversation_ids
        self.waiting = set(conversation_ids)
        self._repaint(changed)

    def tip(self, conversation_id: str) -> str:
        """What a row's badge says ("" for none)."""
        if conversation_id in self.waiting:
            return WAITING_TIP
        return BUSY_TIP if conversation_id in self.busy else ""

    def _repaint(self, conversation_ids: set[str]) -> None:
        for conversation_id in conversation_ids:
            item = self.rows.item(conversation_id)
            if item is not None:
                self.viewport().update(self.visualItemRect(item))
        self.describe_busy()

    def describe_busy(self) -> None:
        """ "Replying…" or "Waiting for you" in the marked rows' descriptions for a screen
        reader, and nothing in any other row; only while one is active: writing it is an item
        edit, which lays every row out."""
        if not QAccessible.isActive():
            return
        role = Qt.ItemDataRole.AccessibleDescriptionRole
        marked = self.busy | self.waiting
        with QSignalBlocker(self):
            for conversation_id in marked | self._described:
                item = self.rows.item(conversation_id)
                wanted = self.tip(conversation_id)
                if item is not None and (item.data(role) or "") != wanted:
                    item.setData(role, wanted)
        self._described = marked

    def dot_rect(self, item: QListWidgetItem) -> QRect:
        """Where a row's dot is drawn: its icon's place."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.chat_rect(item)
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

    def badge(self, item: QListWidgetItem) -> tuple[QRect, str]:
        """Where a waiting row's words are drawn, at its end, and which (an empty box: the row
        is too narrow, the amber dot alone says it)."""
        row = self.chat_rect(item)
        metrics = QFontMetrics(self._badge_font())
        for words in WAITING_WORDS:
            width = metrics.horizontalAdvance(words) + metrics.height()
            if width <= row.width() * (1 - TITLE_SHARE):
                height = min(row.height() - 2, metrics.height() + 2)
                top = row.top() + (row.height() - height) // 2
                return QRect(row.right() - 3 - width, top, width, height), words
        return QRect(), ""

    def reserved_width(self, index: QModelIndex | QPersistentModelIndex) -> int:
        """How much of a row's end its badge takes (its title ends before): the delegate asks."""
        item = self.itemFromIndex(index)
        if item is None or str(item.data(ID_ROLE)) not in self.waiting:
            return 0
        rect, words = self.badge(item)
        row = self.chat_rect(item)
        return row.right() - rect.left() + BADGE_GAP if words else 0

    def _badge_font(self) -> QFont:
        font = QFont(self.font())
        if font.pointSizeF() > 0:  # (not a font sized in pixels)
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        return font

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.busy and not self.waiting:
            return
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        for conversation_id in self.busy | self.waiting:
            item = self.rows.item(conversation_id)
            if item is not None and self.chat_rect(item).intersects(event.rect()):
                waiting = conversation_id in self.waiting
                # On a selected row, the highlight is its background: the dot takes its text's.
                on_highlight = item.isSelected()
                roles = (QPalette.ColorRole.Highlight, QPalette.ColorRole.HighlightedText)
                colour = WAITING_FILL if waiting else self.palette().color(roles[on_highlight])
                painter.setBrush(colour)
                box = self.dot_rect(item)
                side = min(box.width(), box.height()) - 4
                painter.drawEllipse(
                    box.center().x() - side // 2, box.center().y() - side // 2, side, side
                )
                if waiting:
                    self._paint_badge(painter, item)
        painter.end()

    def _paint_badge(self, painter: QPainter, item: QListWidgetItem) -> None:
        """ "Waiting for you" in an amber pill at the row's end, over its title's tail."""
        rect, words = self.badge(item)
        if rect.isEmpty():
            return
        painter.save()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(WAITING_FILL)
        radius = rect.height() / 2
        painter.drawRoundedRect(QRectF(rect), radius, radius)
        painter.setFont(self._badge_font())
        painter.setPen(WAITING_TEXT)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, words)
        painter.restore()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            if self._on_header(event.pos()):
                QToolTip.hideText()  # (not the chat's title below it)
                return True
            item = self.itemAt(event.pos())
            said = self.tip(str(item.data(ID_ROLE))) if item is not None else ""
            if item is not None and said:
                tip = f"{item.data(TITLE_ROLE)} — {said}"
                QToolTip.showText(event.globalPos(), tip, self.viewport())
                return True
        return super().viewportEvent(event)


def _blank_icon() -> QIcon:
    pixmap = QPixmap(DOT_PX, DOT_PX)
    pixmap.fill(QColor(0, 0, 0, 0))
    return QIcon(pixmap)
