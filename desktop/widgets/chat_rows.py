"""The sidebar's rows: a chat whose reply is in flight gets a dot (and "Replying…" for a
screen reader and as its tooltip); Delete asks the sidebar to delete the selected chat."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, QSignalBlocker, QSize, Qt, Signal
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
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from desktop import style
from desktop.widgets.conversation_rows import ID_ROLE, TITLE_ROLE, ShownRows

BUSY_TIP = "Replying…"
DOT_PX = 12  # the busy dot's box, kept free on every row


class ChatRows(QListWidget):
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
